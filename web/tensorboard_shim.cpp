#include "web/tensorboard_shim.hpp"

#include <algorithm>

namespace tony::http {

const std::string& tensorboard_shim_js() {
  // Only forms of text fields are carried: a file upload stays a POST.
  static const std::string js =
      R"(// tony: YARN's web proxy refuses POST (405), so behind it a form goes as a
// GET carrying it (tony-form, hex), which the AM turns back into the POST.
(function () {
  function query(form) {
    var q = new URLSearchParams(), ok = true;
    form.forEach(function (v, k) { if (typeof v === "string") q.append(k, v); else ok = false; });
    return ok ? q.toString() : null;
  }
  function join(url, form) {
    var h = "";
    for (var i = 0; i < form.length; i++) h += (form.charCodeAt(i) | 256).toString(16).slice(1);
    url = String(url);
    return url + (url.indexOf("?") < 0 ? "?" : "&") + "tony-form=" + h;
  }
  var open = XMLHttpRequest.prototype.open, send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url) {
    this.__tony = { method: String(method).toUpperCase(), url: url,
                    rest: Array.prototype.slice.call(arguments, 2) };
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function (body) {
    var r = this.__tony;
    var q = r && r.method === "POST" && body instanceof FormData ? query(body) : null;
    if (q === null) return send.apply(this, arguments);
    open.apply(this, ["GET", join(r.url, q)].concat(r.rest));
    return send.call(this, null);
  };
  if (window.fetch) {
    var fetch0 = window.fetch;
    window.fetch = function (input, init) {
      var q = init && String(init.method).toUpperCase() === "POST" &&
              init.body instanceof FormData ? query(init.body) : null;
      if (q === null || typeof input !== "string") return fetch0.apply(this, arguments);
      var rest = Object.assign({}, init, { method: "GET", body: undefined });
      return fetch0.call(this, join(input, q), rest);
    };
  }
})();
)";
  return js;
}

std::string with_tensorboard_shim(std::string html) {
  auto head = html.find("<head>");
  if (head == std::string::npos)
    return html;
  html.insert(head + 6,
              std::string{"<script src=\"."} + tensorboard_shim_path + "\"></script>");
  return html;
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

} // namespace

std::optional<carried_form> carried_form_of(const std::string& target) {
  static const std::string key = "tony-form=";
  auto q = target.find('?');
  if (q == std::string::npos)
    return std::nullopt;
  carried_form out;
  out.target = target.substr(0, q);
  std::optional<std::string> hex;
  char sep = '?';
  for (size_t at = q + 1; at <= target.size();) {
    auto end = std::min(target.find('&', at), target.size());
    auto part = target.substr(at, end - at);
    if (!hex && part.compare(0, key.size(), key) == 0) {
      hex = part.substr(key.size());
    } else if (!part.empty()) {
      out.target += sep + part;
      sep = '&';
    }
    at = end + 1;
  }
  if (!hex || hex->size() % 2 != 0)
    return std::nullopt;
  for (size_t i = 0; i < hex->size(); i += 2) {
    int hi = hex_digit((*hex)[i]), lo = hex_digit((*hex)[i + 1]);
    if (hi < 0 || lo < 0)
      return std::nullopt;
    out.body += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

} // namespace tony::http
