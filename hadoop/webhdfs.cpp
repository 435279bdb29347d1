#include "hadoop/webhdfs.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "hadoop/hdfs/nameservice.hpp"
#include "messages/error.hpp"

namespace tony::webhdfs {

namespace {

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

size_t collect_location(char* data, size_t size, size_t n, void* out) {
  std::string line(data, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    auto key = line.substr(0, colon);
    for (auto& ch : key)
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (key == "location") {
      auto value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ')
        value.erase(0, 1);
      while (!value.empty() && (value.back() == '\r' || value.back() == '\n'))
        value.pop_back();
      *static_cast<std::string*>(out) = value;
    }
  }
  return size * n;
}

// What to do about a failed TLS handshake: name the CA that was used.
std::string tls_hint(CURLcode rc, const http_auth& auth) {
  if (rc != CURLE_PEER_FAILED_VERIFICATION && rc != CURLE_SSL_CACERT_BADFILE)
    return {};
  auto cas = auth.ca_file.empty() ? std::string{"the system's CA bundle"}
                                  : "the CA file " + auth.ca_file;
  return " (the server's certificate was checked against " + cas +
         "; set [security] ca_file in job.toml or TONY_CA_FILE to the PEM file of the "
         "cluster's CA)";
}

} // namespace

expected<response> call(const std::string& method, const std::string& url,
                        const http_auth& auth, const std::string& upload, bool follow) {
  auto curl = curl_easy_init();
  if (!curl)
    return make_error(errc::infrastructure, "cannot initialize libcurl");
  response result;
  FILE* in = nullptr;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &result.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collect_location);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &result.location);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 300000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, follow ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 3L);
  if (!auth.ca_file.empty())
    curl_easy_setopt(curl, CURLOPT_CAINFO, auth.ca_file.c_str());
  // SPNEGO: libcurl answers a 401 with a Negotiate token from GSSAPI's
  // default credentials, which the scope points at this login's cache. An
  // empty user name is how libcurl is told to authenticate at all.
  std::optional<hadoop::default_credentials_scope> spnego;
  if (auth.kerberos && auth.delegation.empty()) {
    spnego.emplace(*auth.kerberos);
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_NEGOTIATE));
    curl_easy_setopt(curl, CURLOPT_USERPWD, ":");
  }
  struct curl_slist* headers = nullptr;
  if (!upload.empty()) {
    in = std::fopen(upload.c_str(), "rb");
    if (!in) {
      curl_easy_cleanup(curl);
      return make_error(errc::infrastructure, "cannot open " + upload + " for upload");
    }
    struct stat st;
    ::fstat(fileno(in), &st);
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READDATA, in);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(st.st_size));
    headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  } else if (method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
  }
  auto rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.status);
  if (headers)
    curl_slist_free_all(headers);
  if (in)
    std::fclose(in);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) {
    // The URL may carry a delegation token: name the endpoint, not the URL.
    auto where = url.substr(0, url.find('?'));
    return make_error(errc::infrastructure, method + " " + where + ": " +
                                                curl_easy_strerror(rc) +
                                                tls_hint(rc, auth));
  }
  return result;
}

namespace {

std::string op_url_at(const std::string& base, const http_auth& auth,
                      const std::string& path, const std::string& op) {
  auto url = base_url(base) + "/webhdfs/v1" + path + "?op=" + op;
  if (!auth.delegation.empty())
    return url + "&delegation=" + auth.delegation;
  auto doas = auth.proxy_user.empty() ? std::string{} : "&doas=" + auth.proxy_user;
  if (auth.kerberos)
    return url + doas;
  return url + "&user.name=" + auth.user + doas;
}

// What this process knows of each HA list (for every namenode_http that
// names it): the NameNode that last answered as active, and when a call
// last found none answering in all its rounds.
struct list_state {
  std::size_t active = 0;
  std::chrono::steady_clock::time_point all_down{};
  bool was_down = false;
};
std::mutex lists_mutex;
std::map<std::string, list_state>& lists() {
  static std::map<std::string, list_state> known;
  return known;
}

// After a call found no NameNode in all its rounds, the calls of the next
// minute try each once: a job's many calls fail in the time of one.
constexpr auto down_memory = std::chrono::seconds{60};

} // namespace

std::string op_url(const namenode_http& nn, const std::string& path,
                   const std::string& op) {
  return op_url_at(bases_of(nn.base).front(), nn.auth, path, op);
}

std::vector<std::string> bases_of(const std::string& base) {
  std::vector<std::string> result;
  std::size_t start = 0;
  while (start <= base.size()) {
    auto comma = base.find(',', start);
    auto one = base.substr(start, comma == std::string::npos ? std::string::npos
                                                             : comma - start);
    start = comma == std::string::npos ? base.size() + 1 : comma + 1;
    if (!one.empty())
      result.push_back(std::move(one));
  }
  if (result.empty())
    result.emplace_back();
  return result;
}

expected<std::string> webhdfs_address(const hadoop::configuration& conf,
                                      const std::string& authority) {
  auto all = namenode_addresses(conf, authority);
  if (!all)
    return all.error();
  std::string result;
  for (auto& one : *all)
    result += (result.empty() ? "" : ",") + one;
  return result;
}

expected<response> call_op(const namenode_http& nn, const std::string& method,
                           const std::string& path, const std::string& op,
                           const std::string& upload, bool follow) {
  // "?op=<name>", the authentication, then the op's own parameters.
  auto amp = op.find('&');
  auto name = op.substr(0, amp);
  auto params = amp == std::string::npos ? std::string{} : op.substr(amp);
  auto url_of = [&](const std::string& base) {
    return op_url_at(base, nn.auth, path, name) + params;
  };
  auto bases = bases_of(nn.base);
  if (bases.size() == 1)
    return call(method, url_of(bases.front()), nn.auth, upload, follow);
  std::size_t active = 0;
  int rounds = failover_rounds;
  {
    std::lock_guard<std::mutex> guard{lists_mutex};
    auto& known = lists()[nn.base];
    active = known.active;
    if (known.was_down && std::chrono::steady_clock::now() - known.all_down < down_memory)
      rounds = 1;
  }
  auto r = call_active(bases, &active, url_of, method, nn.auth, upload, follow, rounds);
  std::lock_guard<std::mutex> guard{lists_mutex};
  auto& known = lists()[nn.base];
  if (r) {
    known.active = active;
    known.was_down = false;
  } else if (!known.was_down || rounds > 1) {
    known.was_down = true;
    known.all_down = std::chrono::steady_clock::now();
  }
  return r;
}

std::string base_url(const std::string& address) {
  if (address.find("://") != std::string::npos)
    return address;
  return "http://" + address;
}

std::string namenode_address(const hadoop::configuration& conf, const std::string& host) {
  auto policy = conf.get_or("dfs.http.policy", "HTTP_ONLY");
  std::transform(policy.begin(), policy.end(), policy.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  bool https = policy == "HTTPS_ONLY";
  auto address = https ? conf.get_or("dfs.namenode.https-address", host + ":9871")
                       : conf.get_or("dfs.namenode.http-address", host + ":9870");
  if (address.rfind("0.0.0.0:", 0) == 0)
    address = host + address.substr(7);
  return https ? "https://" + address : address;
}

expected<std::vector<std::string>> namenode_addresses(const hadoop::configuration& conf,
                                                      const std::string& authority) {
  auto host = authority.substr(0, authority.find(':'));
  if (!hdfs::is_nameservice(conf, authority))
    return std::vector<std::string>{namenode_address(conf, host)};
  auto nameservices = conf.get_or("dfs.nameservices", "");
  nameservices.erase(std::remove(nameservices.begin(), nameservices.end(), ' '),
                     nameservices.end());
  auto what = "hdfs://" + host + " is a nameservice (dfs.nameservices = " + nameservices +
              ") but ";
  auto origin = conf.sources().empty()
                    ? std::string{"the client configuration"}
                    : "the client configuration in " + conf.sources().front();
  auto provider = conf.get_or("dfs.client.failover.proxy.provider." + host, "");
  if (provider.empty())
    return make_error(errc::invalid_config,
                      what + "dfs.client.failover.proxy.provider." + host +
                          " is not set in " + origin +
                          ": add it (e.g. org.apache.hadoop.hdfs.server.namenode.ha."
                          "ConfiguredFailoverProxyProvider) as on the cluster's own "
                          "clients");
  auto policy = conf.get_or("dfs.http.policy", "HTTP_ONLY");
  std::transform(policy.begin(), policy.end(), policy.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  bool https = policy == "HTTPS_ONLY";
  auto found = hdfs::namenodes_of(conf, host, https ? "https-address" : "http-address");
  if (found.unset)
    return make_error(
        errc::invalid_config,
        what + found.unset->named("WebHDFS address") + " is not set in " + origin +
            (found.unset->id.empty() ? ": list its NameNodes' ids (e.g. nn1,nn2)" : ""));
  std::vector<std::string> result;
  for (auto& nn : found.namenodes)
    result.push_back(https ? "https://" + nn.address : nn.address);
  return result;
}

bool is_standby(const response& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  return j.is_object() && j.contains("RemoteException") &&
         j["RemoteException"].is_object() &&
         j["RemoteException"].value("exception", "") == "StandbyException";
}

bool is_retriable(const response& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (!j.is_object() || !j.contains("RemoteException") ||
      !j["RemoteException"].is_object())
    return false;
  auto& e = j["RemoteException"];
  return e.value("exception", "") == "RetriableException" ||
         e.value("message", "").find("org.apache.hadoop.ipc.RetriableException") !=
             std::string::npos;
}

expected<response>
call_active(const std::vector<std::string>& bases, std::size_t* active,
            const std::function<std::string(const std::string& base)>& url_of,
            const std::string& method, const http_auth& auth, const std::string& upload,
            bool follow, int rounds) {
  if (bases.empty())
    return make_error(errc::invalid_config, "no NameNode to call");
  auto n = bases.size();
  std::size_t first = active && *active < n ? *active : 0;
  std::vector<std::string> said(n);
  auto pause = std::chrono::milliseconds{200};
  for (int round = 0; round < rounds; ++round) {
    if (round > 0) {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds{2000});
    }
    for (std::size_t k = 0; k < n; ++k) {
      auto i = (first + k) % n;
      auto r = call(method, url_of(base_url(bases[i])), auth, upload, follow);
      if (!r) {
        said[i] = describe(r.error());
        continue;
      }
      if (is_standby(*r)) {
        said[i] = "standby (" + remote_message(r->body) + ")";
        continue;
      }
      if (is_retriable(*r)) { // becoming active: asked again next round
        said[i] = "not ready (" + remote_message(r->body) + ")";
        continue;
      }
      if (active)
        *active = i;
      first = i;
      return r;
    }
  }
  std::string text = "no NameNode answered as active (" + std::to_string(rounds) +
                     (rounds == 1 ? " round" : " rounds") + "): ";
  for (std::size_t i = 0; i < n; ++i)
    text += (i ? "; " : "") + base_url(bases[i]) + ": " + said[i];
  return make_error(errc::infrastructure, text);
}

std::string remote_message(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("RemoteException"))
    return j["RemoteException"].value("message", body);
  // A 401 from a Kerberos endpoint is an HTML page; say what it means.
  if (body.find("Authentication required") != std::string::npos ||
      body.find("HTTP ERROR 401") != std::string::npos)
    return "authentication required: the endpoint wants Kerberos (SPNEGO) or a "
           "delegation token (is hadoop.security.authentication=kerberos in the client "
           "configuration, and is there a ticket? klist shows it)";
  return body.substr(0, 300);
}

} // namespace tony::webhdfs
