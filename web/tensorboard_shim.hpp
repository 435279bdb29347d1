#pragma once

// TensorBoard behind YARN's web proxy. The RM's proxy (WebAppProxyServlet,
// Hadoop 3.3 and 3.4) answers GET and PUT only: a POST gets 405 before it
// reaches the AM. TensorBoard's default dashboard, Time Series, asks for its
// data by POSTing forms, so behind that proxy its cards stay empty.
// Behind the proxy the AM adds one script of its own to TensorBoard's page
// (TensorBoard's Content-Security-Policy allows scripts of the page's origin)
// which sends such a form as a GET carrying the form in one parameter,
// `tony-form`, hex-encoded (the proxy decodes a query's escapes and then
// fails on the quotes of TensorBoard's JSON fields: 500, URISyntaxException).
// The AM turns that GET back into the POST TensorBoard expects
// (doc/tracking.md "TensorBoard").

#include <optional>
#include <string>

namespace tony::http {

/// Where the script is served, under the job's tensorboard/ path.
inline constexpr const char* tensorboard_shim_path = "/tony-post-as-get.js";

/// The script.
const std::string& tensorboard_shim_js();

/// TensorBoard's page with the script's tag first in its <head>; `html`
/// unchanged when it has no <head>.
std::string with_tensorboard_shim(std::string html);

/// A form the script sent as a GET: the target without its `tony-form`
/// parameter, and the form as an application/x-www-form-urlencoded body.
struct carried_form {
  std::string target;
  std::string body;
};

/// The form `target` (path and query) carries; nothing when it carries none
/// or one that is not even-length hex.
std::optional<carried_form> carried_form_of(const std::string& target);

} // namespace tony::http
