#include "am/token_renewer.hpp"

#include <filesystem>

#include <spdlog/spdlog.h>

#include "hadoop/ipc_client.hpp"
#include "hadoop/kerberos.hpp"

namespace tony {

namespace {

constexpr std::chrono::minutes retry_delay{1};
constexpr std::chrono::seconds call_budget{30};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

} // namespace

// -- token_box -----------------------------------------------------------------------

token_box::token_box(hadoop::credentials initial)
    : creds_(std::move(initial)) {
  // nop
}

hadoop::credentials token_box::current() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return creds_;
}

void token_box::merge(const hadoop::credentials& fresh) {
  std::lock_guard<std::mutex> guard{mtx_};
  for (auto& [alias, tok] : fresh.tokens())
    creds_.add_token(alias, tok);
}

// -- token_renewer ---------------------------------------------------------------------

token_renewer::token_renewer(hdfs::renewal_plan plan, std::string work_dir,
                             std::shared_ptr<token_box> box)
    : plan_(std::move(plan))
    , box_(std::move(box)) {
  keytab_ = (std::filesystem::path{work_dir} / plan_.keytab).lexically_normal().string();
  keytab_ = std::filesystem::absolute(keytab_).string();
}

token_renewer::~token_renewer() {
  stop();
}

void token_renewer::start(publish_fn publish) {
  publish_ = std::move(publish);
  thread_ = std::thread{[this] { run(); }};
}

void token_renewer::stop() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void token_renewer::run() {
  std::unique_lock<std::mutex> lock{mtx_};
  while (!stopping_) {
    lock.unlock();
    auto delay = round();
    lock.lock();
    cv_.wait_for(lock, delay, [this] { return stopping_; });
  }
}

std::chrono::milliseconds token_renewer::round() {
  if (!login_) {
    auto login = hadoop::kerberos_credentials::login({plan_.principal, keytab_});
    if (!login) {
      spdlog::error("tony-am: cannot log in to get new delegation tokens (retrying in "
                    "1 min): {}",
                    login.error().message());
      return retry_delay;
    }
    login_ = *login;
    spdlog::info("tony-am: Kerberos: {} from {}, to get new delegation tokens",
                 login_->principal(), login_->source());
  }
  // A client per round: its connections are not needed until the next.
  hadoop::connection_options opts;
  opts.allow_simple_fallback = false;
  auto ipc = std::make_shared<hadoop::ipc_client>(opts);
  auto until = hadoop::deadline_after(call_budget);
  if (interval_.count() == 0) {
    auto interval = hdfs::renewal_interval(ipc, plan_.tokens, login_, until);
    if (!interval) {
      spdlog::error("tony-am: {} (retrying in 1 min)", interval.error().message());
      return retry_delay;
    }
    interval_ = *interval;
  }
  auto got = hdfs::obtain_tokens(ipc, plan_.tokens, login_, until);
  if (!got) {
    spdlog::error("tony-am: {} (retrying in 1 min)", got.error().message());
    return retry_delay;
  }
  box_->merge(hdfs::to_credentials(*got));
  ++generation_;
  if (publish_)
    publish_(hadoop::serialize_credentials(box_->current()));
  auto delay = hdfs::refresh_delay(*got, interval_, now_ms());
  std::string names;
  for (auto& t : *got)
    names += (names.empty() ? "" : ", ") + t.uri;
  spdlog::info("tony-am: new HDFS delegation tokens (round {}) from {}; renew interval "
               "{} s; the next in {} s",
               generation_, names, interval_.count() / 1000, delay.count() / 1000);
  return delay;
}

} // namespace tony
