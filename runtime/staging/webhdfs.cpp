#include "runtime/staging/webhdfs.hpp"

#include <sys/stat.h>

#include <cctype>
#include <cstdio>

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

} // namespace

caf::expected<response> call(const std::string& method, const std::string& url,
                             const std::string& upload, bool follow) {
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
  if (rc != CURLE_OK)
    return make_error(errc::infrastructure,
                      method + " " + url + ": " + curl_easy_strerror(rc));
  return result;
}

std::string op_url(const std::string& http_address, const std::string& path,
                   const std::string& op, const std::string& user) {
  return "http://" + http_address + "/webhdfs/v1" + path + "?op=" + op +
         "&user.name=" + user;
}

std::string remote_message(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("RemoteException"))
    return j["RemoteException"].value("message", body);
  return body.substr(0, 300);
}

} // namespace tony::webhdfs
