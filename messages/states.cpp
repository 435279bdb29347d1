// The names of job and task states (messages/states.hpp).

#include "messages/states.hpp"

#include <ostream>

namespace tony {

namespace {

constexpr job_state all_job_states[] = {
    job_state::fresh,   job_state::allocating, job_state::registering,
    job_state::running, job_state::succeeded,  job_state::failed,
    job_state::killed,  job_state::lost,
};

constexpr task_state all_task_states[] = {
    task_state::requested,  task_state::allocated, task_state::launched,
    task_state::registered, task_state::running,   task_state::restarting,
    task_state::succeeded,  task_state::failed,    task_state::killed,
    task_state::lost,
};

template <class State, size_t N>
std::optional<State> named(const State (&all)[N], std::string_view name) {
  for (auto x : all)
    if (name == to_string(x))
      return x;
  return std::nullopt;
}

} // namespace

const char* to_string(job_state x) {
  switch (x) {
  case job_state::fresh:
    return "NEW";
  case job_state::allocating:
    return "ALLOCATING";
  case job_state::registering:
    return "REGISTERING";
  case job_state::running:
    return "RUNNING";
  case job_state::succeeded:
    return "SUCCEEDED";
  case job_state::failed:
    return "FAILED";
  case job_state::killed:
    return "KILLED";
  case job_state::lost:
    return "LOST";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& out, job_state x) {
  return out << to_string(x);
}

std::optional<job_state> job_state_named(std::string_view name) {
  return named(all_job_states, name);
}

bool is_final(job_state x) {
  return x == job_state::succeeded || x == job_state::failed || x == job_state::killed;
}

const char* to_string(task_state x) {
  switch (x) {
  case task_state::requested:
    return "REQUESTED";
  case task_state::allocated:
    return "ALLOCATED";
  case task_state::launched:
    return "LAUNCHED";
  case task_state::registered:
    return "REGISTERED";
  case task_state::running:
    return "RUNNING";
  case task_state::restarting:
    return "RESTARTING";
  case task_state::succeeded:
    return "SUCCEEDED";
  case task_state::failed:
    return "FAILED";
  case task_state::killed:
    return "KILLED";
  case task_state::lost:
    return "LOST";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& out, task_state x) {
  return out << to_string(x);
}

std::optional<task_state> task_state_named(std::string_view name) {
  return named(all_task_states, name);
}

bool is_final(task_state x) {
  return x == task_state::succeeded || x == task_state::failed ||
         x == task_state::killed || x == task_state::lost;
}

bool is_failure(task_state x) {
  return x == task_state::failed || x == task_state::lost;
}

} // namespace tony
