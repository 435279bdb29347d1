#include "hadoop/yarn/rm_failover.hpp"

#include <thread>

namespace tony::yarn {

bool is_failover_error(const hadoop::error& err) {
  return err.code() == hadoop::error_code::connect_failed ||
         err.code() == hadoop::error_code::connection_closed ||
         err.is_remote("StandbyException");
}

rm_failover::rm_failover(std::vector<rm_peer> peers, failover_options opts)
    : peers_(std::move(peers))
    , opts_(opts) {
  // nop
}

hadoop::connection_params rm_failover::aimed(const hadoop::connection_params& base,
                                             size_t index) const {
  auto result = base;
  auto& peer = peers_[index];
  result.address = peer.address;
  if (!peer.id.empty()) {
    // "ResourceManager rm2 at host:port" in every message about it.
    result.server_kind = base.server_kind + " " + peer.id;
    result.address_key = base.address_key + "." + peer.id;
    result.connect_timeout = opts_.connect_budget;
  }
  return result;
}

hadoop::connection_params
rm_failover::current(const hadoop::connection_params& base) const {
  std::lock_guard<std::mutex> guard{mtx_};
  return aimed(base, current_);
}

int rm_failover::failovers() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return failovers_;
}

namespace {

std::string summary(const std::vector<std::string>& said, int rounds,
                    std::chrono::milliseconds spent) {
  std::string text = "no ResourceManager answered (" + std::to_string(rounds) +
                     (rounds == 1 ? " round" : " rounds") + " in " +
                     hadoop::describe_duration(spent) + "): ";
  for (size_t i = 0; i < said.size(); ++i)
    text += (i == 0 ? "" : "; ") + said[i];
  return text + " (are the ResourceManagers running? check "
                "yarn.resourcemanager.ha.rm-ids and their addresses in yarn-site.xml)";
}

} // namespace

std::optional<hadoop::error> rm_failover::run(const hadoop::connection_params& base,
                                              const try_once& fn,
                                              hadoop::deadline until) {
  if (peers_.size() == 1) {
    fn(aimed(base, 0)); // no HA: the plain call, its own result
    return std::nullopt;
  }
  auto start = hadoop::clock::now();
  size_t first;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    first = current_;
  }
  std::vector<std::string> said(peers_.size());
  auto pause = opts_.initial_pause;
  for (int round = 1;; ++round) {
    for (size_t step = 0; step < peers_.size(); ++step) {
      auto index = (first + step) % peers_.size();
      auto err = fn(aimed(base, index));
      if (!err || !is_failover_error(*err)) {
        std::lock_guard<std::mutex> guard{mtx_};
        if (current_ != index)
          ++failovers_;
        current_ = index;
        return std::nullopt;
      }
      said[index] = err->message();
      if (hadoop::expired(until))
        break;
    }
    auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
        hadoop::clock::now() - start);
    if (hadoop::remaining(until) <= pause) {
      std::vector<std::string> tried;
      for (auto& text : said)
        if (!text.empty())
          tried.push_back(text);
      return hadoop::error{hadoop::error_code::connect_failed,
                           summary(tried, round, spent)};
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, opts_.max_pause);
  }
}

} // namespace tony::yarn
