#include "hadoop/webhdfs.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

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

caf::expected<response> call(const std::string& method, const std::string& url,
                             const http_auth& auth, const std::string& upload,
                             bool follow) {
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

std::string op_url(const namenode_http& nn, const std::string& path,
                   const std::string& op) {
  auto url = base_url(nn.base) + "/webhdfs/v1" + path + "?op=" + op;
  if (!nn.auth.delegation.empty())
    return url + "&delegation=" + nn.auth.delegation;
  if (nn.auth.kerberos)
    return url;
  return url + "&user.name=" + nn.auth.user;
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
