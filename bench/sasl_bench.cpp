// What SASL protection costs a Hadoop RPC client: connection setup and
// call latency for KERBEROS (GSSAPI) and TOKEN (DIGEST-MD5) at QOP auth,
// auth-int and auth-conf, against Hadoop's own RPC server and an MIT KDC
// (tests/integration/kerberos/fixture.sh; pass its directory).
//
//   tony-bench-sasl --fixture DIR [--connections 20] [--calls 500]
//
// Prints one line per mechanism and QOP: median connection setup (TCP,
// SASL, context) and median call (small request and response), both in
// microseconds, and the rate of 64 KiB round trips.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hadoop/credentials.hpp"
#include "hadoop/ipc_connection.hpp"
#include "hadoop/kerberos.hpp"
#include "hadoop/yarn/proto/yarn.pb.h"
#include "hadoop/yarn/protocols.hpp"

namespace {

using namespace tony;
using clock_type = std::chrono::steady_clock;

std::map<std::string, std::string> read_env(const std::string& file) {
  std::map<std::string, std::string> result;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (auto eq = line.find('='); eq != std::string::npos)
      result[line.substr(0, eq)] = line.substr(eq + 1);
  return result;
}

double median(std::vector<double> xs) {
  if (xs.empty())
    return 0;
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

double micros_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

struct variant {
  std::string name;
  hadoop::connection_params target;
  std::string method;
  std::string big_field; // where a 64 KiB payload goes
};

// One small call and one 64 KiB call on `conn`.
bool call(hadoop::ipc_connection& conn, const variant& v, size_t payload) {
  auto until = hadoop::deadline_after(std::chrono::seconds{30});
  if (v.method == "registerApplicationMaster") {
    yarn::proto::RegisterApplicationMasterRequestProto req;
    req.set_host("bench");
    req.set_tracking_url(std::string(payload, 'u'));
    return static_cast<bool>(conn.call(v.method, req, until));
  }
  yarn::proto::GetApplicationReportRequestProto req;
  req.mutable_application_id()->set_id(1);
  req.mutable_application_id()->set_cluster_timestamp(1700000000000);
  (void)payload; // the report request has no room for a payload
  return static_cast<bool>(conn.call(v.method, req, until));
}

void measure(const variant& v, int connections, int calls) {
  std::vector<double> setups;
  std::unique_ptr<hadoop::ipc_connection> conn;
  for (int i = 0; i < connections; ++i) {
    auto t0 = clock_type::now();
    auto opened =
        hadoop::ipc_connection::open(v.target, {}, std::string(16, 'b'),
                                     hadoop::deadline_after(std::chrono::seconds{30}));
    if (!opened) {
      std::cout << v.name << ": " << opened.error().message() << "\n";
      return;
    }
    // The server answers the first call only after the context arrived.
    if (!call(**opened, v, 0)) {
      std::cout << v.name << ": first call failed\n";
      return;
    }
    setups.push_back(micros_since(t0));
    conn = std::move(*opened);
  }
  std::vector<double> latencies;
  for (int i = 0; i < calls; ++i) {
    auto t0 = clock_type::now();
    if (!call(*conn, v, 0))
      return;
    latencies.push_back(micros_since(t0));
  }
  double big_rate = 0;
  if (v.method == "registerApplicationMaster") {
    auto t0 = clock_type::now();
    for (int i = 0; i < calls / 10; ++i)
      if (!call(*conn, v, 64 * 1024))
        return;
    big_rate = (calls / 10) / (micros_since(t0) / 1e6);
  }
  std::cout << v.name << "  qop " << hadoop::to_string(conn->negotiated_qop())
            << "  setup " << static_cast<int>(median(setups)) << " us  call "
            << static_cast<int>(median(latencies)) << " us";
  if (big_rate > 0)
    std::cout << "  64KiB calls/s " << static_cast<int>(big_rate);
  std::cout << "\n";
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"tony-bench-sasl: the cost of SASL protection per connection and call"};
  std::string dir;
  int connections = 20;
  int calls = 500;
  app.add_option("--fixture", dir, "the kerberos fixture directory")->required();
  app.add_option("--connections", connections, "connections opened per variant");
  app.add_option("--calls", calls, "calls timed per variant");
  CLI11_PARSE(app, argc, argv);
  auto env = read_env(dir + "/env");
  ::setenv("KRB5_CONFIG", env["KRB5_CONFIG"].c_str(), 1);
  auto creds = hadoop::kerberos_credentials::login(
      {"alice@" + env["TONY_REALM"], env["TONY_KEYTABS"] + "/alice.keytab"});
  auto tokens = hadoop::read_credentials_file(env["SASL_TOKEN_FILE"]);
  if (!creds || !tokens) {
    std::cerr << "tony-bench-sasl: cannot log in or read the token file in " << dir
              << "\n";
    return 1;
  }
  auto host = env["TONY_SERVER_HOST"];
  for (auto qop : {"AUTHENTICATION", "INTEGRITY", "PRIVACY"}) {
    variant krb{std::string{"KERBEROS/GSSAPI    "}, {}, "getApplicationReport", ""};
    krb.target.address = {host, static_cast<uint16_t>(std::stoi(
                                    env["SASL_KERBEROS_" + std::string{qop} + "_PORT"]))};
    krb.target.protocol = yarn::application_client_protocol;
    krb.target.kerberos = *creds;
    krb.target.kerberos_principal = {yarn::rm_principal_key, env["TONY_SERVER_PRINCIPAL"],
                                     ""};
    measure(krb, connections, calls);
    variant tok{std::string{"TOKEN/DIGEST-MD5   "}, {}, "registerApplicationMaster", ""};
    tok.target.address = {host, static_cast<uint16_t>(std::stoi(
                                    env["SASL_TOKEN_" + std::string{qop} + "_PORT"]))};
    tok.target.protocol = yarn::application_master_protocol;
    tok.target.auth_token = *tokens->find(hadoop::amrm_token_kind);
    measure(tok, connections, calls);
  }
  return 0;
}
