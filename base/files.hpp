#pragma once

// Small file helpers: reading, the home directory, private scratch
// directories and files that are never written through a link, and how
// many connections the open-files limit leaves room for.

#include <cstddef>
#include <optional>
#include <string>

namespace tony::base {

/// The whole content of the file at `path`, or nullopt when it cannot be
/// opened or read.
std::optional<std::string> read_file(const std::string& path);

/// "~" and "~/rest" with the user's home ($HOME, else the password
/// database's entry); any other path unchanged ("~user" included).
std::string expand_home(const std::string& path);

/// A fresh directory of this user's alone: "<parent>/<prefix>XXXXXX" made by
/// mkdtemp (mode 0700, a name nobody could have guessed and pre-created),
/// then checked (a directory, not a link, owned by the effective user, no
/// access for group or others). Its path, or nullopt with `why` saying what
/// failed. Without `parent`, $TMPDIR (else /tmp) is tried first and
/// ~/.tony/tmp second.
std::optional<std::string> make_private_dir(const std::string& prefix, std::string& why,
                                            const std::string& parent = {});

/// The directory ~/.tony/<name> of this user's alone, made (mode 0700) if
/// missing: it and ~/.tony are checked as make_private_dir checks. Its
/// path, or nullopt with `why`.
std::optional<std::string> private_home_dir(const std::string& name, std::string& why);

/// Writes `content` to a new file at `path` created with
/// O_CREAT|O_EXCL|O_NOFOLLOW and `mode`: never through a link and never over
/// a file already there. false with `why` on any failure (the half-written
/// file is removed).
bool write_new_file(const std::string& path, const std::string& content, unsigned mode,
                    std::string& why);

/// The soft limit on this process's open files (RLIMIT_NOFILE); 0 when it is
/// unlimited or cannot be read.
size_t open_files_limit();

/// How many connections may wait at once on one port: `wanted`, but at most
/// `percent` % of the open files left under `limit` (0: no limit) beyond
/// `reserve` (what the process needs for its own connections and files),
/// and never fewer than 16. Each waiting connection holds a descriptor; a
/// cap past the limit would make accept() fail instead of dropping the
/// oldest waiting one.
size_t pending_cap(size_t wanted, size_t limit, size_t reserve, size_t percent);

} // namespace tony::base
