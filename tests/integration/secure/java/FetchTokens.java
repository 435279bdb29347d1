// What a workflow scheduler (Oozie's launcher) gives the actions it starts:
// a token file with the user's RM and HDFS delegation tokens, fetched with
// Hadoop's own client classes. Used by test_secure_jobs.py.
//
//   java -cp <hadoop classpath>:<dir> FetchTokens FILE RENEWER [cancel-rm]
//
// "cancel-rm" cancels the RM token after writing the file, as a scheduler
// whose workflow ended would.

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.ConverterUtils;

public class FetchTokens {
  public static void main(String[] args) throws Exception {
    Configuration conf = new YarnConfiguration();
    YarnClient yarn = YarnClient.createYarnClient();
    yarn.init(conf);
    yarn.start();
    Token<?> rm = ConverterUtils.convertFromYarn(
        yarn.getRMDelegationToken(new Text(args[1])),
        ClientRMProxy.getRMDelegationTokenService(conf));
    Credentials creds = new Credentials();
    creds.addToken(rm.getService(), rm);
    FileSystem.get(conf).addDelegationTokens(args[1], creds);
    creds.writeTokenStorageFile(new Path("file://" + args[0]), conf);
    if (args.length > 2 && args[2].equals("cancel-rm")) {
      rm.cancel(conf);
    }
    yarn.stop();
    System.out.println("wrote " + creds.numberOfTokens() + " tokens to " + args[0]);
  }
}
