package com.linkedin.tony.cli;

import tony.launcher.TonySubmitLauncher;

/**
 * TonY's cluster submitter: {@code java -cp ... com.linkedin.tony.cli.ClusterSubmitter
 * -executes ...} runs tony-submit with the same arguments and exits with its
 * exit code (doc/migrating.md, "TonY's jar").
 */
public final class ClusterSubmitter {
  private ClusterSubmitter() {}

  public static void main(String[] args) {
    TonySubmitLauncher.main(args);
  }
}
