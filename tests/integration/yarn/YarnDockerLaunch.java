import java.io.File;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.LocalDirsHandlerService;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.linux.runtime.DelegatingLinuxContainerRuntime;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.linux.runtime.LinuxContainerRuntimeConstants;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.resourceplugin.ResourcePluginManager;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.runtime.ContainerExecutionException;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.runtime.ContainerRuntimeContext;

/**
 * Hands the environment of a container that tony's AM launched to the
 * NodeManager's own Linux container runtimes (DelegatingLinuxContainerRuntime,
 * which the LinuxContainerExecutor uses to pick the Docker runtime) and lets
 * them validate it and write the docker command file that YARN's native
 * container-executor would run. The test machines have neither that setuid
 * binary nor a Docker daemon, so the privileged step itself runs
 * /bin/true; everything before it is the NodeManager's code.
 *
 * usage: YarnDockerLaunch ENV_FILE CONTAINER_ID USER SCRATCH_DIR [NETWORKS]
 *   ENV_FILE    one NAME=VALUE per line: the container's environment
 *   NETWORKS    the NodeManager's allowed container networks (default
 *               "host,bridge,none", YARN's own default)
 * Prints the docker command file and exits 0, or prints "refused: <why>"
 * and exits 3 when the runtime refuses the launch.
 */
public final class YarnDockerLaunch {
  private YarnDockerLaunch() {}

  /** The NodeManager's local dirs, under the scratch dir. */
  static final class ScratchDirs extends LocalDirsHandlerService {
    private final File root;

    ScratchDirs(File root) {
      this.root = root;
    }

    @Override
    public Path getLocalPathForWrite(String pathStr) {
      return new Path(new File(root, pathStr).getAbsolutePath());
    }
  }

  private static Object zero(Class<?> type) {
    if (type == boolean.class) return false;
    if (type == int.class) return 0;
    if (type == long.class) return 0L;
    return null;
  }

  /** An interface whose methods answer from `answers`, or a zero value. */
  @SuppressWarnings("unchecked")
  private static <T> T fake(Class<T> type, Map<String, Object> answers) {
    return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        (proxy, method, args) -> answers.containsKey(method.getName())
            ? answers.get(method.getName())
            : zero(method.getReturnType()));
  }

  private static Map<String, String> readEnv(File file) throws Exception {
    Map<String, String> env = new HashMap<>();
    for (String line : Files.readAllLines(file.toPath(), StandardCharsets.UTF_8)) {
      int eq = line.indexOf('=');
      if (eq > 0) env.put(line.substring(0, eq), line.substring(eq + 1));
    }
    return env;
  }

  public static void main(String[] argv) throws Exception {
    if (argv.length < 4) {
      System.err.println("usage: YarnDockerLaunch ENV_FILE CONTAINER_ID USER SCRATCH_DIR [NETWORKS]");
      System.exit(2);
    }
    Map<String, String> env = readEnv(new File(argv[0]));
    ContainerId id = ContainerId.fromString(argv[1]);
    String user = argv[2];
    File scratch = new File(argv[3]);
    String networks = argv.length > 4 ? argv[4] : "host,bridge,none";

    Configuration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.LINUX_CONTAINER_RUNTIME_ALLOWED_RUNTIMES, "default,docker");
    conf.set(YarnConfiguration.NM_DOCKER_ALLOWED_CONTAINER_NETWORKS, networks);
    conf.set(YarnConfiguration.NM_DOCKER_DEFAULT_CONTAINER_NETWORK, networks.split(",")[0]);
    conf.set(YarnConfiguration.NM_LINUX_CONTAINER_EXECUTOR_PATH, "/bin/true");

    Map<String, Object> nm = new HashMap<>();
    nm.put("getLocalDirsHandler", new ScratchDirs(new File(scratch, "nm-local")));
    nm.put("getResourcePluginManager", new ResourcePluginManager());
    Context nmContext = fake(Context.class, nm);

    ContainerLaunchContext launch = ContainerLaunchContext.newInstance(
        Collections.emptyMap(), env, List.of("bash", "launch_container.sh"), null, null, null);
    File work = new File(scratch, "work");
    File logs = new File(scratch, "logs");
    Map<String, Object> c = new HashMap<>();
    c.put("getContainerId", id);
    c.put("getLaunchContext", launch);
    c.put("getUser", user);
    c.put("getLogDir", logs.getAbsolutePath());
    c.put("getWorkDir", work.getAbsolutePath());
    c.put("getCsiVolumesRootDir", new File(scratch, "csi").getAbsolutePath());
    Container container = fake(Container.class, c);

    DelegatingLinuxContainerRuntime runtime = new DelegatingLinuxContainerRuntime();
    List<String> none = new ArrayList<>();
    try {
      runtime.initialize(conf, nmContext);
      ContainerRuntimeContext ctx = new ContainerRuntimeContext.Builder(container)
          .setExecutionAttribute(LinuxContainerRuntimeConstants.RUN_AS_USER, user)
          .setExecutionAttribute(LinuxContainerRuntimeConstants.USER, user)
          .setExecutionAttribute(LinuxContainerRuntimeConstants.APPID,
              id.getApplicationAttemptId().getApplicationId().toString())
          .setExecutionAttribute(LinuxContainerRuntimeConstants.CONTAINER_WORK_DIR,
              new Path(work.getAbsolutePath()))
          .setExecutionAttribute(LinuxContainerRuntimeConstants.NM_PRIVATE_CONTAINER_SCRIPT_PATH,
              new Path(scratch.getAbsolutePath(), "launch_container.sh"))
          .setExecutionAttribute(LinuxContainerRuntimeConstants.NM_PRIVATE_TOKENS_PATH,
              new Path(scratch.getAbsolutePath(), "container_tokens"))
          .setExecutionAttribute(LinuxContainerRuntimeConstants.PID_FILE_PATH,
              new Path(scratch.getAbsolutePath(), "pid"))
          .setExecutionAttribute(LinuxContainerRuntimeConstants.LOCAL_DIRS,
              List.of(new File(scratch, "nm-local").getAbsolutePath()))
          .setExecutionAttribute(LinuxContainerRuntimeConstants.LOG_DIRS,
              List.of(logs.getAbsolutePath()))
          .setExecutionAttribute(LinuxContainerRuntimeConstants.FILECACHE_DIRS, none)
          .setExecutionAttribute(LinuxContainerRuntimeConstants.USER_FILECACHE_DIRS, none)
          .setExecutionAttribute(LinuxContainerRuntimeConstants.CONTAINER_LOG_DIRS,
              List.of(logs.getAbsolutePath()))
          .setExecutionAttribute(LinuxContainerRuntimeConstants.APPLICATION_LOCAL_DIRS, none)
          .setExecutionAttribute(LinuxContainerRuntimeConstants.LOCALIZED_RESOURCES,
              new HashMap<Path, List<String>>())
          .build();
      runtime.launchContainer(ctx);
    } catch (ContainerExecutionException e) {
      System.out.println("refused: " + e.getMessage());
      System.exit(3);
    }
    // The command file the Docker runtime wrote for container-executor.
    try (var files = Files.walk(new File(scratch, "nm-local").toPath())) {
      for (java.nio.file.Path p : (Iterable<java.nio.file.Path>) files::iterator) {
        if (p.getFileName().toString().endsWith(".cmd")) {
          System.out.print(Files.readString(p, StandardCharsets.UTF_8));
          System.exit(0);
        }
      }
    }
    System.out.println("refused: the runtime wrote no docker command file (not the Docker runtime?)");
    System.exit(3);
  }
}
