// Writes aggregated log files with Hadoop's own AggregatedLogFormat.LogWriter
// (the class a NodeManager uploads with), for runtime/yarn/aggregated_log's
// golden tests. Run from the repository root with the cluster's jars:
//
//   cp=$(tail -1 "$(scripts/yarn/jars.sh)")
//   javac -d /tmp/mal -cp "$cp" tests/unit/hadoop/golden/MakeAggregatedLogs.java
//   java -cp "/tmp/mal:$cp" MakeAggregatedLogs tests/unit/hadoop/golden
//
// gz.tfile: compression "gz" (yarn.nodemanager.log-aggregation.compression-type),
// two containers, one of them with a 3 MiB file (a value of several chunks:
// tfile.io.chunk.size is 1 MiB) and an empty one.

import java.io.File;
import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAccessType;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.logaggregation.AggregatedLogFormat;

public class MakeAggregatedLogs {
  static void write(File f, String text) throws Exception {
    f.getParentFile().mkdirs();
    try (FileOutputStream out = new FileOutputStream(f)) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
  }

  public static void main(String[] args) throws Exception {
    File outDir = new File(args[0]);
    File logs = new File(System.getProperty("java.io.tmpdir"), "mal-logs");
    ApplicationId app = ApplicationId.newInstance(1700000000000L, 42);
    ApplicationAttemptId attempt = ApplicationAttemptId.newInstance(app, 1);
    ContainerId am = ContainerId.newContainerId(attempt, 1);
    ContainerId worker = ContainerId.newContainerId(attempt, 2);
    File amDir = new File(logs, app + "/" + am);
    File workerDir = new File(logs, app + "/" + worker);
    write(new File(amDir, "am.log"), "tony-am: started\ntony-am: job SUCCEEDED\n");
    write(new File(workerDir, "stdout"), "hello from worker:0\n");
    write(new File(workerDir, "stderr"), "");
    StringBuilder big = new StringBuilder();
    while (big.length() < 3 * 1024 * 1024)
      big.append("a line of a long executor log\n");
    big.append("the last line\n");
    write(new File(workerDir, "executor.log"), big.toString());

    Configuration conf = new Configuration();
    conf.set("yarn.nodemanager.log-aggregation.compression-type", "gz");
    String user = System.getProperty("user.name");
    AggregatedLogFormat.LogWriter writer = new AggregatedLogFormat.LogWriter();
    Path target = new Path(new File(outDir, "gz.tfile").getAbsoluteFile().toURI());
    writer.initialize(conf, target, UserGroupInformation.createRemoteUser(user));
    writer.writeApplicationOwner("tony");
    Map<ApplicationAccessType, String> acls = new HashMap<>();
    acls.put(ApplicationAccessType.VIEW_APP, "tony");
    writer.writeApplicationACLs(acls);
    for (ContainerId c : new ContainerId[] {am, worker})
      writer.append(new AggregatedLogFormat.LogKey(c),
                    new AggregatedLogFormat.LogValue(
                        Collections.singletonList(logs.getAbsolutePath()), c, user));
    writer.close();
    new File(outDir, ".gz.tfile.crc").delete(); // the local filesystem's checksum
  }
}
