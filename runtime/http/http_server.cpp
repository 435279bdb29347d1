#include "runtime/http/http_server.hpp"

#include <spdlog/spdlog.h>

#include "messages/error.hpp"

namespace tony::http {

http_server::http_server()
    : server_(std::make_unique<httplib::Server>()) {
  // Bounded waits on every connection; a stuck client cannot hold a thread.
  server_->set_read_timeout(std::chrono::seconds(30));
  server_->set_write_timeout(std::chrono::seconds(60));
  // Short: stop() waits for idle keep-alive connections to time out.
  server_->set_keep_alive_timeout(1);
  server_->set_payload_max_length(64 << 20);
}

http_server::~http_server() {
  stop();
}

caf::expected<int> http_server::bind(const std::string& host, int port) {
  int bound = port == 0 ? server_->bind_to_any_port(host)
                        : (server_->bind_to_port(host, port) ? port : -1);
  if (bound <= 0)
    return make_error(errc::infrastructure,
                      "cannot listen for HTTP on " + host + ":" + std::to_string(port) +
                          (port == 0 ? "" : " (is the port in use?)"));
  port_ = bound;
  return bound;
}

void http_server::start(handler h) {
  auto shared = std::make_shared<handler>(std::move(h));
  auto plain = [shared](const httplib::Request& req, httplib::Response& res) {
    (*shared)(req, req.body, res);
  };
  auto with_reader = [shared](const httplib::Request& req, httplib::Response& res,
                              const httplib::ContentReader& reader) {
    // The raw body, also for multipart forms (httplib would split those).
    std::string body;
    reader([&](const char* data, size_t len) {
      body.append(data, len);
      return true;
    });
    (*shared)(req, body, res);
  };
  const std::string all = "/.*";
  server_->Get(all, plain);
  server_->Options(all, plain);
  server_->Post(all, with_reader);
  server_->Put(all, with_reader);
  server_->Patch(all, with_reader);
  server_->Delete(all, with_reader);
  server_->set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::warn("http: {} {} failed: {}", req.method, req.path, what);
        res.status = 500;
        res.set_content("tony: internal error: " + what + "\n", "text/plain");
      });
  listening_done_ = false;
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    listening_done_ = true;
  });
  // cpp-httplib 0.11's stop() is a no-op until the listen loop runs: a stop
  // right after start would leave the thread blocked in accept() forever.
  // Return only once the loop runs (or has already ended).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server_->is_running() && !listening_done_ &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void http_server::stop() {
  if (server_)
    server_->stop();
  if (thread_.joinable())
    thread_.join();
}

} // namespace tony::http
