#pragma once

// Atoms of tony's protocols. CAF 0.17 atoms are compile-time constants of at
// most 10 characters; equal texts are the same atom everywhere (including
// CAF's own), so texts here are chosen to be unambiguous within one actor.

#include <caf/atom.hpp>

namespace tony {

#define TONY_ATOM(name, text)                                                            \
  using name = caf::atom_constant<caf::atom(text)>;                                      \
  constexpr name name##_v = name{};

// executor <-> registry
TONY_ATOM(register_atom, "register")
TONY_ATOM(heartbeat_atom, "heartbeat")
TONY_ATOM(exit_atom, "task_exit")
TONY_ATOM(spec_atom, "clusterspc")
TONY_ATOM(status_atom, "status")
TONY_ATOM(bye_atom, "bye")
TONY_ATOM(tokens_atom, "jobtokens")

// lifecycle
TONY_ATOM(stop_atom, "stop")
TONY_ATOM(stop_all_atom, "stop_all")
TONY_ATOM(kill_atom, "kill")
TONY_ATOM(expect_atom, "expect")
TONY_ATOM(registered_atom, "registered")
TONY_ATOM(barrier_atom, "barrier")
TONY_ATOM(wait_atom, "wait_end")
TONY_ATOM(linger_atom, "linger")
TONY_ATOM(tick_atom, "tick")
TONY_ATOM(timer_atom, "timer")
TONY_ATOM(reopen_atom, "reopen")
TONY_ATOM(resume_atom, "resume")

// resource manager and heartbeater
TONY_ATOM(rm_ready_atom, "rm_ready")
TONY_ATOM(rm_error_atom, "rm_error")
TONY_ATOM(allocate_atom, "allocate")
TONY_ATOM(allocated_atom, "allocated")
TONY_ATOM(completed_atom, "completed")
TONY_ATOM(cluster_atom, "cluster")
TONY_ATOM(ask_atom, "ask")
TONY_ATOM(release_atom, "release")
TONY_ATOM(cancel_atom, "cancel")
TONY_ATOM(avoid_atom, "avoid")
TONY_ATOM(finish_atom, "finish")
TONY_ATOM(progress_atom, "progress")

// node manager and launcher
TONY_ATOM(launch_atom, "launch")
TONY_ATOM(launched_atom, "launched")
TONY_ATOM(launch_failed_atom, "launch_err")
TONY_ATOM(start_atom, "start")
TONY_ATOM(running_atom, "ctr_runs")

#undef TONY_ATOM

} // namespace tony
