#pragma once

// The environment tony-submit gives the AM's container on YARN (besides what
// the NodeManager sets: CONTAINER_ID, NM_HOST, LOG_DIRS,
// HADOOP_TOKEN_FILE_LOCATION, ...): the contract between tony-submit, which
// writes it (submit/yarn_submit.cpp), and the AM's yarn backend,
// which reads it (am/yarn_backend.cpp). Where the job's files are
// (staging, history) is derived once, by tony-submit, and travels here.

#include <map>
#include <string>
#include <vector>

#include "hadoop/yarn/records.hpp"
#include "messages/error.hpp"
#include "messages/types.hpp"

namespace tony {

namespace yarn_env {

/// yarn.resourcemanager.scheduler.address as the submitter resolved it
/// ("host:port"), or with ResourceManager HA that of every rm-id
/// ("rm1=host:port,rm2=host:port").
constexpr const char* scheduler = "TONY_RM_SCHEDULER";
/// JSON list of the LocalResources every executor container gets.
constexpr const char* executor_resources = "TONY_EXECUTOR_RESOURCES";
/// The job's staging dir (file:///... or hdfs://...), removed at the end.
constexpr const char* staging_uri = "TONY_STAGING_URI";
/// A directory holding tony-am and tony-executor on every node; when set,
/// nothing is staged for them.
constexpr const char* install_dir = "TONY_INSTALL_DIR";
/// Otherwise the binaries and their libraries come as one archive
/// (runtime/staging/node_bundle.hpp), linked into every container under
/// this name: ./tony-bundle/bin/tony-am, ./tony-bundle/bin/tony-executor. Not
/// "tony": a task's working directory holds the job's src_dir, and a
/// directory named like the Python package (tony.run ships it there) would
/// hide it from the tasks' python.
constexpr const char* bundle_link = "tony-bundle";
/// The cluster's RUNNING nodes as "host=rack,host=rack": asks name them so
/// the scheduler places a gang several containers per node heartbeat.
/// Unset on clusters of more than nodes_in_asks_limit nodes.
constexpr const char* nodes = "TONY_NODES";
constexpr size_t nodes_in_asks_limit = 100;
/// The ResourceManager's yarn.resourcemanager.placement-constraints.handler
/// as the submitter's Hadoop configuration has it ("scheduler" or
/// "placement-processor"); unset when disabled, YARN's default. Capped
/// types (max_per_node) are then asked with SchedulingRequests.
constexpr const char* placement_constraints = "TONY_PLACEMENT_CONSTRAINTS";
/// The NameNode's WebHDFS address (host:port) when staging is on HDFS.
constexpr const char* webhdfs_address = "TONY_WEBHDFS";
/// JSON object: task type -> the LocalResources only its executors get
/// ([tasks.<type>] files and archives).
constexpr const char* type_resources = "TONY_TYPE_RESOURCES";
/// The history dir where the AM keeps the event log at the end
/// (doc/tracking.md), and its WebHDFS address when it is on HDFS.
constexpr const char* history_uri = "TONY_HISTORY_URI";
constexpr const char* history_webhdfs = "TONY_HISTORY_WEBHDFS";
/// The PEM CA file the AM checks HTTPS endpoints (WebHDFS) against: the
/// name of a local resource in its working directory ([security] ca_file
/// or TONY_CA_FILE of the submitter). Unset: the node's CA bundle.
constexpr const char* ca_file = "TONY_CA_FILE";
constexpr const char* ca_resource = "tony-ca.pem";
/// JSON of an hdfs::renewal_plan: set when the job was submitted with a
/// keytab, which is then the AM's private local resource `keytab_resource`
/// (0600 on HDFS, localized for the application's user only); the AM gets
/// new HDFS delegation tokens with it before the old ones expire.
constexpr const char* token_renewal = "TONY_TOKEN_RENEWAL";
constexpr const char* keytab_resource = "tony.keytab";
/// The application's VIEW_APP and MODIFY_APP ACLs ([security] view_acl and
/// modify_acl as Hadoop ACL text; unset: nobody but the owner and the
/// admins), which the AM gives every executor container too, so that each
/// NodeManager applies them to the logs it serves.
constexpr const char* view_acl = "TONY_VIEW_ACL";
constexpr const char* modify_acl = "TONY_MODIFY_ACL";
/// "true" when the submitter's yarn-site.xml has yarn.acl.enable: the AM
/// then serves its page, API, logs and TensorBoard only to users the view
/// ACL, the owner or yarn.admin.acl (TONY_ADMIN_ACL) admit (web/view_acl.hpp).
constexpr const char* acls_enabled = "TONY_ACLS_ENABLED";
constexpr const char* admin_acl = "TONY_ADMIN_ACL";

} // namespace yarn_env

expected<std::vector<local_resource>> parse_resources(const std::string& text);

/// TONY_NODES' value as node places (malformed items are skipped).
std::vector<yarn::node_place> parse_nodes(const std::string& text);

/// A NodeManager writes each environment variable into its launch script as
/// `export NAME="value"` without escaping, so the shell would expand `$`,
/// backquotes and break on `"`. This escapes them: values arrive literally,
/// as they do on the local backend.
std::string escape_env_value(const std::string& value);

/// escape_env_value applied to every value.
std::map<std::string, std::string> escape_env(std::map<std::string, std::string> env);

std::string resources_to_json(const std::vector<local_resource>& resources);

/// yarn_env::type_resources' value, and back (empty text: no type has any).
std::string
type_resources_to_json(const std::map<std::string, std::vector<local_resource>>& by_type);
expected<std::map<std::string, std::vector<local_resource>>>
parse_type_resources(const std::string& text);

} // namespace tony
