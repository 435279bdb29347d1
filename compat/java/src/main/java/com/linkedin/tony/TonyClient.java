package com.linkedin.tony;

import tony.launcher.TonySubmitLauncher;

/**
 * TonY's client main, as scripts and workflow plug-ins call it: the same as
 * {@link com.linkedin.tony.cli.ClusterSubmitter} (doc/migrating.md, "TonY's
 * jar").
 */
public final class TonyClient {
  private TonyClient() {}

  public static void main(String[] args) {
    TonySubmitLauncher.main(args);
  }
}
