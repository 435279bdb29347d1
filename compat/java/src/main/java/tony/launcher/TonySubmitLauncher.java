package tony.launcher;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * TonY's java entry points as a launcher of tony-submit (doc/migrating.md,
 * "TonY's jar"). It runs tony-submit with the arguments it was given, its
 * standard streams those of this process, and exits with its exit code.
 * Around the arguments it adds what TonY's own client takes from the JVM:
 *
 * <ul>
 *   <li>{@code --backend yarn} unless the arguments choose a backend
 *       (TonY's ClusterSubmitter always submits to YARN);
 *   <li>{@code --conf_file} naming the classpath's {@code tony.xml} when no
 *       {@code -conf_file} is given (TonY reads that resource then); one
 *       inside a jar is copied to a private temporary directory, removed at
 *       exit;
 *   <li>{@code HADOOP_CONF_DIR}: when unset, {@code YARN_CONF_DIR}, else the
 *       directory of the classpath's {@code yarn-site.xml} (or
 *       {@code core-site.xml}), which is where {@code hadoop classpath}
 *       puts the client configuration.
 * </ul>
 *
 * <p>tony-submit is looked for beside the jar (its directory, then
 * {@code ../bin}), in {@code $TONY_HOME/bin}, then on {@code PATH}. Where it
 * is not found, or cannot be started, the launcher says where it looked and
 * exits {@link #EXIT_USAGE}.
 */
public final class TonySubmitLauncher {
  /** tony-submit's exit code for a usage or configuration error. */
  public static final int EXIT_USAGE = 2;

  private static final String SUBMIT = "tony-submit";
  private static final String NAME = "tony-cli";

  /** Main classes whose name may come first (hadoop jar JAR CLASS ARGS...). */
  private static final List<String> ENTRY_POINTS =
      Arrays.asList("com.linkedin.tony.cli.ClusterSubmitter", "com.linkedin.tony.TonyClient");

  private final Map<String, String> env;
  private final ClassLoader loader;
  private Path tempDir;
  private Process child;

  TonySubmitLauncher(Map<String, String> env, ClassLoader loader) {
    this.env = env;
    this.loader = loader;
  }

  /** Runs tony-submit with {@code args} and exits the JVM with its exit code. */
  public static void main(String[] args) {
    ClassLoader loader = Thread.currentThread().getContextClassLoader();
    if (loader == null) {
      loader = TonySubmitLauncher.class.getClassLoader();
    }
    TonySubmitLauncher launcher = new TonySubmitLauncher(System.getenv(), loader);
    Runtime.getRuntime().addShutdownHook(new Thread(launcher::stop, "tony-cli-stop"));
    System.exit(launcher.run(args));
  }

  // -- the run ---------------------------------------------------------------

  int run(String[] given) {
    List<String> args = new ArrayList<>(Arrays.asList(given));
    if (!args.isEmpty() && ENTRY_POINTS.contains(args.get(0))) {
      args.remove(0); // hadoop jar tony-cli.jar CLASS ...: the manifest named one already
    }
    List<String> looked = new ArrayList<>();
    Path submit = findSubmit(looked);
    if (submit == null) {
      error(SUBMIT + " not found; looked in " + String.join(", ", looked)
          + ". Set TONY_HOME to the directory of tony's installation (the one holding"
          + " bin/" + SUBMIT + "), put " + SUBMIT + " on PATH, or keep this jar beside it");
      return EXIT_USAGE;
    }
    List<String> command = new ArrayList<>();
    command.add(submit.toString());
    if (!hasOption(args, "backend")) {
      command.add("--backend");
      command.add("yarn");
    }
    if (!hasOption(args, "conf_file")) {
      String conf;
      try {
        conf = classpathTonyXml();
      } catch (IOException e) {
        error("cannot copy tony.xml from the classpath: " + e.getMessage());
        return EXIT_USAGE;
      }
      if (conf != null) {
        command.add("--conf_file");
        command.add(conf);
      }
    }
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
    String hadoopConf = hadoopConfDir();
    if (hadoopConf != null) {
      pb.environment().put("HADOOP_CONF_DIR", hadoopConf);
    }
    try {
      synchronized (this) {
        child = pb.start();
      }
      return child.waitFor();
    } catch (IOException e) {
      error("cannot run " + submit + ": " + e.getMessage());
      return EXIT_USAGE;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    }
  }

  /**
   * At JVM exit: a tony-submit still running (the JVM was signalled) is
   * stopped with SIGTERM, on which it kills its job, and given 30 s to do
   * so; the temporary tony.xml is removed.
   */
  synchronized void stop() {
    if (child != null && child.isAlive()) {
      child.destroy();
      try {
        if (!child.waitFor(30, TimeUnit.SECONDS)) {
          child.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (tempDir != null) {
      try (Stream<Path> files = Files.walk(tempDir)) {
        files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
      } catch (IOException e) {
        // Best effort: the directory is private and small.
      }
      tempDir = null;
    }
  }

  // -- where tony-submit is ---------------------------------------------------

  /** The first executable tony-submit of the places below; each is added to {@code looked}. */
  Path findSubmit(List<String> looked) {
    List<Path> dirs = new ArrayList<>();
    Path jarDir = jarDirectory();
    if (jarDir != null) {
      dirs.add(jarDir);
      dirs.add(jarDir.resolve("..").resolve("bin").normalize());
    }
    String home = env.get("TONY_HOME");
    if (home != null && !home.isEmpty()) {
      dirs.add(Paths.get(home, "bin"));
    }
    for (Path dir : dirs) {
      looked.add(dir.toString());
      Path candidate = dir.resolve(SUBMIT);
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    if (home == null || home.isEmpty()) {
      looked.add("$TONY_HOME/bin (TONY_HOME is not set)");
    }
    String path = env.get("PATH");
    looked.add("PATH" + (path == null ? " (not set)" : "=" + path));
    if (path != null) {
      for (String entry : path.split(File.pathSeparator)) {
        if (entry.isEmpty()) {
          continue;
        }
        Path candidate = Paths.get(entry, SUBMIT);
        if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
          return candidate;
        }
      }
    }
    return null;
  }

  /** The directory of the jar (or class directory) this class was loaded from. */
  private static Path jarDirectory() {
    CodeSource source = TonySubmitLauncher.class.getProtectionDomain().getCodeSource();
    if (source == null || source.getLocation() == null) {
      return null;
    }
    try {
      Path where = Paths.get(source.getLocation().toURI()).toAbsolutePath();
      return Files.isDirectory(where) ? where : where.getParent();
    } catch (URISyntaxException | IllegalArgumentException e) {
      return null;
    }
  }

  // -- what the JVM was given -------------------------------------------------

  /**
   * True when {@code args} hold TonY's or tony-submit's option {@code name}
   * in any of the forms tony-submit takes: {@code -name}, {@code --name},
   * each alone or with {@code =value}.
   */
  static boolean hasOption(List<String> args, String name) {
    for (String a : args) {
      String bare = a.startsWith("--") ? a.substring(2) : a.startsWith("-") ? a.substring(1) : null;
      if (bare != null && (bare.equals(name) || bare.startsWith(name + "="))) {
        return true;
      }
    }
    return false;
  }

  /**
   * The path of the classpath's tony.xml, or null when there is none. A
   * resource inside a jar is copied out first.
   */
  private String classpathTonyXml() throws IOException {
    URL url = loader.getResource("tony.xml");
    if (url == null) {
      return null;
    }
    Path file = localFile(url);
    if (file != null) {
      note("tony.xml from the classpath: " + file);
      return file.toString();
    }
    tempDir = Files.createTempDirectory("tony-cli-"); // owner-only on POSIX
    Path copy = tempDir.resolve("tony.xml");
    try (InputStream in = url.openStream()) {
      Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
    }
    note("tony.xml from the classpath: " + url + " (copied to " + copy + ")");
    return copy.toString();
  }

  /**
   * HADOOP_CONF_DIR for tony-submit when it should differ from this
   * process's: YARN_CONF_DIR, or the classpath's configuration directory,
   * when HADOOP_CONF_DIR is unset; null to leave the environment as it is.
   */
  private String hadoopConfDir() {
    if (isSet("HADOOP_CONF_DIR")) {
      return null;
    }
    if (isSet("YARN_CONF_DIR")) {
      return env.get("YARN_CONF_DIR");
    }
    for (String site : new String[] {"yarn-site.xml", "core-site.xml"}) {
      URL url = loader.getResource(site);
      Path file = url == null ? null : localFile(url);
      if (file != null) {
        note("Hadoop configuration from the classpath: HADOOP_CONF_DIR=" + file.getParent());
        return file.getParent().toString();
      }
    }
    return null;
  }

  private boolean isSet(String name) {
    String value = env.get(name);
    return value != null && !value.isEmpty();
  }

  /** The file a file: URL names, or null for any other URL. */
  private static Path localFile(URL url) {
    if (!"file".equals(url.getProtocol())) {
      return null;
    }
    try {
      return Paths.get(url.toURI()).toAbsolutePath();
    } catch (URISyntaxException | IllegalArgumentException e) {
      return null;
    }
  }

  private static void note(String text) {
    System.err.println(NAME + ": note: " + text);
  }

  private static void error(String text) {
    System.err.println(NAME + ": " + text);
  }
}
