// Real Hadoop RPC servers for tony's SASL tests: Hadoop's own
// org.apache.hadoop.ipc.Server (SaslRpcServer, javax.security.sasl GSSAPI
// and DIGEST-MD5, the WRAP framing of Server.wrapWithSasl and
// unwrapPacketAndProcessRpcs), logged in from a keytab of the test KDC, as a
// secure ResourceManager is. One JVM serves every variant the tests need:
//
//   kerberos-<qop>   ApplicationClientProtocol, KERBEROS, hadoop.rpc.protection
//                    authentication | integrity | privacy
//   simple           ApplicationClientProtocol, SIMPLE only
//   token-<qop>      ApplicationMasterProtocol, TOKEN (DIGEST-MD5) only, with a
//                    secret manager of its own; its tokens go to token files
//
// The protocol implementations echo who called, how, and what was sent, so
// the C++ tests can check what the server saw. Usage:
//
//   java -Djava.security.krb5.conf=K -cp CP HadoopSaslServers \
//        --dir DIR --host H --principal rm/H@REALM --keytab rm.keytab
//
// Writes DIR/servers.env (NAME=VALUE lines: ports, token files), then prints
// READY and serves until killed.

import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import javax.crypto.SecretKey;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.ipc.Server;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.SecretManager;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.ApplicationClientProtocol;
import org.apache.hadoop.yarn.api.ApplicationMasterProtocol;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.FinishApplicationMasterRequest;
import org.apache.hadoop.yarn.api.protocolrecords.FinishApplicationMasterResponse;
import org.apache.hadoop.yarn.api.protocolrecords.GetApplicationReportRequest;
import org.apache.hadoop.yarn.api.protocolrecords.GetApplicationReportResponse;
import org.apache.hadoop.yarn.api.protocolrecords.GetClusterMetricsResponse;
import org.apache.hadoop.yarn.api.protocolrecords.GetClusterNodesResponse;
import org.apache.hadoop.yarn.api.protocolrecords.GetNewApplicationResponse;
import org.apache.hadoop.yarn.api.protocolrecords.KillApplicationResponse;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterRequest;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterResponse;
import org.apache.hadoop.yarn.api.protocolrecords.SubmitApplicationRequest;
import org.apache.hadoop.yarn.api.protocolrecords.SubmitApplicationResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.api.records.YarnClusterMetrics;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.ipc.YarnRPC;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.util.Records;

public final class HadoopSaslServers {
  private static final long CLUSTER_TIMESTAMP = 1700000000000L;
  private static final String[] PROTECTIONS = {"authentication", "integrity", "privacy"};

  // -- who called and how ----------------------------------------------------

  /** "user=alice@R auth=KERBEROS": what the server knows of the caller. */
  private static String caller() {
    UserGroupInformation ugi = Server.getRemoteUser();
    if (ugi == null) {
      return "user=? auth=?";
    }
    return "user=" + ugi.getUserName() + " auth=" + ugi.getAuthenticationMethod();
  }

  // -- ApplicationClientProtocol ---------------------------------------------

  /** What submitApplication received, replayed by getApplicationReport. */
  private static final Map<ApplicationId, String> SUBMITTED = new ConcurrentHashMap<>();
  private static final AtomicInteger NEXT_APP = new AtomicInteger(1);

  private static Object clientProtocol() {
    InvocationHandler handler = (proxy, method, args) -> {
      switch (method.getName()) {
        case "getNewApplication": {
          ApplicationId id = ApplicationId.newInstance(CLUSTER_TIMESTAMP,
              NEXT_APP.getAndIncrement());
          Resource max = Resource.newInstance(8192, 8);
          return GetNewApplicationResponse.newInstance(id, Resource.newInstance(128, 1), max);
        }
        case "submitApplication": {
          ApplicationSubmissionContext ctx =
              ((SubmitApplicationRequest) args[0]).getApplicationSubmissionContext();
          String big = "";
          if (ctx.getAMContainerSpec() != null
              && ctx.getAMContainerSpec().getEnvironment() != null) {
            big = ctx.getAMContainerSpec().getEnvironment().getOrDefault("ECHO", "");
          }
          SUBMITTED.put(ctx.getApplicationId(),
              caller() + " name=" + ctx.getApplicationName() + " echo=" + big);
          return SubmitApplicationResponse.newInstance();
        }
        case "getApplicationReport": {
          ApplicationId id = ((GetApplicationReportRequest) args[0]).getApplicationId();
          ApplicationReport report = Records.newRecord(ApplicationReport.class);
          report.setApplicationId(id);
          report.setUser(Server.getRemoteUser() == null ? ""
              : Server.getRemoteUser().getShortUserName());
          report.setName("sasl-test");
          report.setQueue("default");
          report.setApplicationType("TONY");
          report.setYarnApplicationState(YarnApplicationState.FINISHED);
          report.setFinalApplicationStatus(FinalApplicationStatus.SUCCEEDED);
          report.setTrackingUrl("N/A");
          report.setHost("N/A");
          report.setRpcPort(-1);
          String submitted = SUBMITTED.get(id);
          report.setDiagnostics(caller() + (submitted == null ? "" : " submitted: " + submitted));
          return GetApplicationReportResponse.newInstance(report);
        }
        case "getClusterNodes":
          return GetClusterNodesResponse.newInstance(new ArrayList<>());
        case "getClusterMetrics":
          return GetClusterMetricsResponse.newInstance(YarnClusterMetrics.newInstance(1));
        case "forceKillApplication":
          return KillApplicationResponse.newInstance(true);
        case "toString":
          return "HadoopSaslServers.clientProtocol";
        case "hashCode":
          return 1;
        case "equals":
          return proxy == args[0];
        default:
          throw new YarnException(method.getName() + " is not served by the test server");
      }
    };
    return Proxy.newProxyInstance(HadoopSaslServers.class.getClassLoader(),
        new Class<?>[] {ApplicationClientProtocol.class}, handler);
  }

  // -- ApplicationMasterProtocol ---------------------------------------------

  private static final class MasterProtocol implements ApplicationMasterProtocol {
    @Override
    public RegisterApplicationMasterResponse registerApplicationMaster(
        RegisterApplicationMasterRequest request) {
      RegisterApplicationMasterResponse response =
          Records.newRecord(RegisterApplicationMasterResponse.class);
      // The queue carries the echo: who called, and the tracking URL sent
      // (the tests send a large one to cross several wrapped chunks).
      response.setQueue(caller() + " url=" + request.getTrackingUrl());
      response.setMaximumResourceCapability(Resource.newInstance(8192, 8));
      return response;
    }

    @Override
    public AllocateResponse allocate(AllocateRequest request) {
      AllocateResponse response = Records.newRecord(AllocateResponse.class);
      response.setResponseId(request.getResponseId() + 1);
      response.setNumClusterNodes(1);
      return response;
    }

    @Override
    public FinishApplicationMasterResponse finishApplicationMaster(
        FinishApplicationMasterRequest request) {
      return FinishApplicationMasterResponse.newInstance(true);
    }
  }

  /** Issues and checks AMRMTokens with a key of its own. */
  private static final class TokenSecrets extends SecretManager<AMRMTokenIdentifier> {
    private final SecretKey key = generateSecret();

    @Override
    protected byte[] createPassword(AMRMTokenIdentifier id) {
      return createPassword(id.getBytes(), key);
    }

    @Override
    public byte[] retrievePassword(AMRMTokenIdentifier id) {
      return createPassword(id.getBytes(), key);
    }

    @Override
    public AMRMTokenIdentifier createIdentifier() {
      return new AMRMTokenIdentifier();
    }
  }

  // -- setup -------------------------------------------------------------------

  private static Server start(Configuration conf, Class<?> protocol, Object impl, String host,
      SecretManager<AMRMTokenIdentifier> secrets) {
    Server server = YarnRPC.create(conf).getServer(protocol, impl,
        new InetSocketAddress(host, 0), conf, secrets, 2);
    server.start();
    return server;
  }

  private static Configuration conf(String authentication, String protection) {
    Configuration conf = new Configuration(false);
    conf.set("hadoop.security.authentication", authentication);
    conf.set("hadoop.rpc.protection", protection);
    conf.set("hadoop.security.authorization", "false");
    return conf;
  }

  private static void writeTokens(String file, Token<AMRMTokenIdentifier> token)
      throws IOException {
    Credentials credentials = new Credentials();
    credentials.addToken(new Text("amrm"), token);
    credentials.writeTokenStorageFile(new Path("file://" + file), new Configuration(false));
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = new LinkedHashMap<>();
    for (int i = 0; i + 1 < argv.length; i += 2) {
      args.put(argv[i], argv[i + 1]);
    }
    String dir = args.get("--dir");
    String host = args.get("--host");
    Configuration login = conf("kerberos", "authentication");
    UserGroupInformation.setConfiguration(login);
    UserGroupInformation.loginUserFromKeytab(args.get("--principal"), args.get("--keytab"));

    Map<String, String> env = new LinkedHashMap<>();
    for (String protection : PROTECTIONS) {
      Server server = start(conf("kerberos", protection), ApplicationClientProtocol.class,
          clientProtocol(), host, null);
      env.put("SASL_KERBEROS_" + protection.toUpperCase() + "_PORT",
          Integer.toString(server.getListenerAddress().getPort()));
    }
    Server simple = start(conf("simple", "authentication"), ApplicationClientProtocol.class,
        clientProtocol(), host, null);
    env.put("SASL_SIMPLE_PORT", Integer.toString(simple.getListenerAddress().getPort()));

    TokenSecrets secrets = new TokenSecrets();
    for (String protection : PROTECTIONS) {
      // As the RM's ApplicationMasterService: TOKEN is the only method.
      Server server = start(conf("TOKEN", protection), ApplicationMasterProtocol.class,
          new MasterProtocol(), host, secrets);
      env.put("SASL_TOKEN_" + protection.toUpperCase() + "_PORT",
          Integer.toString(server.getListenerAddress().getPort()));
    }
    ApplicationAttemptId attempt =
        ApplicationAttemptId.newInstance(ApplicationId.newInstance(CLUSTER_TIMESTAMP, 99), 1);
    Token<AMRMTokenIdentifier> token = new Token<>(new AMRMTokenIdentifier(attempt, 1), secrets);
    writeTokens(dir + "/amrm.tokens", token);
    byte[] wrong = token.getPassword().clone();
    wrong[0] ^= 0x5a;
    writeTokens(dir + "/forged.tokens", new Token<>(token.getIdentifier(), wrong,
        token.getKind(), token.getService()));
    env.put("SASL_TOKEN_FILE", dir + "/amrm.tokens");
    env.put("SASL_FORGED_TOKEN_FILE", dir + "/forged.tokens");

    try (PrintWriter out = new PrintWriter(new FileWriter(dir + "/servers.env"))) {
      for (Map.Entry<String, String> e : env.entrySet()) {
        out.println(e.getKey() + "=" + e.getValue());
      }
    }
    System.out.println("READY");
    System.out.flush();
    Thread.currentThread().join();
  }
}
