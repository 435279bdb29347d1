#pragma once

// The task's working directory, as TonY, tf-yarn and skein lay it out: the
// container's own directory, holding the entries of the shipped source
// directory, every shipped file and archive, and the Python environment.
//
//   <container>/            the task's working directory
//     src/                  the shipped src_dir (a link or unpacked archive)
//     train.py -> src/train.py, data/ -> src/data     (one link per entry)
//     vocab.txt, model/     shipped files, archives (unpacked)
//     venv/ or venv.pex     python_venv
//     .tony-bin/python, python3   run the venv's interpreter
//
// Both backends put the resources there (YARN's localizer, the local pool's
// links); the executor adds the rest before the command starts. A source
// entry whose name is taken (a shipped file, venv, YARN's own files) is not
// linked: the shipped one wins.

#include <map>
#include <string>
#include <vector>

#include "messages/error.hpp"

namespace tony {

struct task_layout_input {
  /// The container's directory, absolute; the command runs there.
  std::string container_dir;
  /// [code] python_binary_path: relative to the unpacked venv (or to the
  /// working directory without one), or absolute on the node.
  std::string python_binary_path;
  /// Names of the shipped files and archives.
  std::vector<std::string> shipped;
  /// The environment the command would get; PATH and PYTHONPATH are read.
  std::map<std::string, std::string> env;
};

struct task_layout {
  std::string work_dir;
  /// Variables to set on top of the environment (PATH, PYTHONPATH).
  std::map<std::string, std::string> env;
  /// The interpreter `python` and `python3` run, if there is one.
  std::string python;
  /// Source entries left out because their name was taken, for the log.
  std::vector<std::string> shadowed;
};

/// Links the source entries, finds the interpreter and writes the python
/// wrappers. Fails with a message for the user when python_binary_path
/// names nothing runnable or the directory cannot be prepared.
expected<task_layout> prepare_task_layout(const task_layout_input& in);

} // namespace tony
