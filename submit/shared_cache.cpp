#include "submit/shared_cache.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <system_error>

#include "base/files.hpp"
#include "messages/error.hpp"
#include "runtime/staging/node_bundle.hpp"
#include "runtime/yarn/am_env.hpp"
#include "submit/content_check.hpp"

namespace fs = std::filesystem;

namespace tony {

namespace {

// What follows a doubted copy's reason: for the user's own cache, and for
// an operator's.
constexpr const char* own_root_hint =
    "this job stages a copy of its own (remove that directory, or point [cluster] "
    "staging_dir at a directory only you can write, to cache it again)";
constexpr const char* shared_root_hint =
    "this job uses your own cache instead (tell whoever manages [cluster] shared_cache)";

void say_doubt(staging::stager& cache, const std::string& name, const cache_use& use,
               const std::string& why, const char* hint = own_root_hint) {
  if (use.warn)
    use.warn("not using the cached " + cache.uri() + "/" + name + ": " + why + "; " +
             hint);
}

// The cached copy `name` in `cache`, when it is there and trusted; an
// absent copy is errc::unsatisfiable (as stat says), a doubted one too,
// after saying why.
expected<local_resource> trusted_copy(staging::stager& cache, const std::string& name,
                                      bool archive, const cache_use& use, bool* doubted,
                                      const std::string& also = {},
                                      const char* hint = own_root_hint) {
  auto res = cache.stat(name, archive);
  if (!res)
    return res;
  auto doubt = cache.doubt(name, use.user, also);
  if (doubt && doubt->empty())
    return res;
  *doubted = true;
  say_doubt(cache, name, use, doubt ? *doubt : describe(doubt.error()), hint);
  return make_error(errc::unsatisfiable, "a doubted copy");
}

// The private file in which this user's tony-submit remembers the cached
// copy at `uri` it last checked (~/.tony/cache): its checksum on HDFS, its
// identity on file:// (staging::staged_content), so that the next
// submission compares only that, instead of reading the copy or making
// (or reading) the local file again; empty when there is no private place
// for it.
std::string memo_path(const std::string& uri) {
  std::string why;
  auto dir = base::private_home_dir("cache", why);
  if (!dir)
    return {};
  return *dir + "/copy-" + staging::text_hash(uri);
}

void write_memo(const std::string& uri, const std::string& print) {
  auto path = memo_path(uri);
  if (path.empty() || print.empty())
    return;
  auto tmp = path + "." + std::to_string(::getpid());
  std::string why;
  std::remove(tmp.c_str());
  if (base::write_new_file(tmp, print, 0600, why) &&
      std::rename(tmp.c_str(), path.c_str()) != 0)
    std::remove(tmp.c_str());
}

bool memo_says(const std::string& uri, const std::string& print) {
  auto path = memo_path(uri);
  if (path.empty() || print.empty())
    return false;
  auto text = base::read_file(path);
  return text && *text == print;
}

// Why the trusted copy `name` in `cache` may not hold what this submission
// would upload: empty when it does, or where the file system keeps
// nothing to compare (object stores). `local` gives that file (made on
// demand); `what` names it. A copy this user checked before (as
// remembered) is taken as it is, and a checked one is remembered.
std::string checked(staging::stager& cache, const std::string& name,
                    const std::function<expected<std::string>()>& local,
                    const std::string& what) {
  const auto uri = cache.uri() + "/" + name;
  auto content = cache.content(name);
  if (!content)
    return "cannot check its content: " + describe(content.error());
  if (content->path.empty() && content->algorithm.empty())
    return {};
  // file:// remembers the copy's identity (no read); HDFS its checksum.
  if (!content->identity.empty() && memo_says(uri, content->identity))
    return {};
  auto there = staged_fingerprint(*content);
  if (!there)
    return "cannot check its content: " + describe(there.error());
  if (content->identity.empty() && memo_says(uri, *there))
    return {};
  auto path = local();
  if (!path)
    return "cannot check its content: " + describe(path.error());
  auto here = local_fingerprint(*content, *path);
  if (!here)
    return "cannot check its content: " + describe(here.error());
  if (*here != *there)
    return "its content is not " + what + " (" + *there + " there, " + *here + " here)";
  write_memo(uri, content->identity.empty() ? *there : content->identity);
  return {};
}

// The copy of `name` in the operator's shared cache (cache_use::shared_root)
// under <sub>/<hash>/: used when it is there, owned by the user or by the
// shared root's owner and writable by nobody else, and holds what `local`
// gives. errc::unsatisfiable otherwise (a doubted copy is said).
expected<local_resource> from_shared(const cache_use& use, const std::string& sub,
                                     const std::string& hash, const std::string& name,
                                     bool archive,
                                     const std::function<expected<std::string>()>& local,
                                     const std::string& what) {
  if (use.shared_root.empty())
    return make_error(errc::unsatisfiable, "no shared cache");
  auto top = staging::make_stager(use.shared_root, use.shared_nn);
  auto cache =
      staging::make_stager(use.shared_root + "/" + sub + "/" + hash, use.shared_nn);
  if (!top || !cache)
    return make_error(errc::unsatisfiable, "no shared cache");
  auto manager = (*top)->owner();
  if (!manager) {
    if (use.warn)
      use.warn("warning: cannot read [cluster] shared_cache " + use.shared_root + ": " +
               describe(manager.error()) + "; the job uses your own cache");
    return make_error(errc::unsatisfiable, "no shared cache");
  }
  bool doubted = false;
  auto res =
      trusted_copy(**cache, name, archive, use, &doubted, *manager, shared_root_hint);
  if (!res)
    return res;
  if (auto why = checked(**cache, name, local, what); !why.empty()) {
    say_doubt(**cache, name, use, why, shared_root_hint);
    return make_error(errc::unsatisfiable, "a doubted copy");
  }
  res->visibility = "PRIVATE";
  return res;
}

// The job's own copy of a cached file: in its staging dir, under a name of
// its own (`stored`), linked into the containers as `name`.
expected<local_resource> own_copy(const cache_use& use, const std::string& path,
                                  const std::string& stored, const std::string& name,
                                  bool archive) {
  if (!use.own)
    return make_error(errc::infrastructure, "no staging dir for a copy of " + path);
  auto res = use.own->put(path, stored, archive);
  if (res)
    res->name = name;
  return res;
}

} // namespace

expected<local_resource> stage_once(const std::string& dir, const std::string& path,
                                    const std::string& name, bool archive,
                                    const cache_use& use) {
  auto hash = staging::content_hash(path);
  if (hash.empty())
    return make_error(errc::infrastructure, "cannot read " + path);
  auto local = [&]() -> expected<std::string> { return path; };
  if (auto shared = from_shared(use, "envs", hash, name, archive, local, path + "'s"))
    return shared;
  auto cache = staging::make_stager(dir + "/" + hash, use.nn);
  if (!cache)
    return cache.error();
  std::error_code ec;
  auto size = static_cast<int64_t>(fs::file_size(path, ec));
  bool doubted = false;
  auto res = trusted_copy(**cache, name, archive, use, &doubted);
  auto own = [&] {
    return own_copy(use, path, "cache-" + hash + "-" + name, name, archive);
  };
  if (doubted)
    return own();
  // Absent: stage it, keeping a copy another submit put there meanwhile
  // (same content). Another size: a stale copy, replaced. Files are
  // written under a temporary name and renamed, so a copy is whole or
  // absent. Whichever copy is there is then checked against `path`.
  if (!res)
    res = (*cache)->put_shared(path, name, archive);
  else if (res->size != size)
    res = (*cache)->put(path, name, archive);
  if (!res)
    return res;
  if (auto why = checked(**cache, name, local, path + "'s"); !why.empty()) {
    say_doubt(**cache, name, use, why);
    return own();
  }
  // Localized PRIVATE, like the binaries: the NodeManager keeps it in the
  // user's cache, so the next job with the same content on that node
  // starts without downloading or unpacking it again.
  res->visibility = "PRIVATE";
  return res;
}

expected<local_resource> stage_node_bundle(const std::string& dir,
                                           const std::string& bin_dir,
                                           const std::string& scratch,
                                           const cache_use& use) {
  auto bundle = staging::collect_node_bundle(bin_dir);
  if (!bundle)
    return bundle.error();
  if (!bundle->has_libraries && use.warn)
    use.warn("warning: no libraries to ship beside " + bin_dir +
             " (../lib/tony, made by the build's tony-bundle target); the nodes "
             "need tony's shared libraries installed");
  const std::string file = "tony.tgz";
  auto archive = scratch + "/" + file;
  // The archive, made once when a copy must be compared or staged (as
  // reproducibly as the copy it is compared with was), or why it cannot be.
  std::optional<expected<std::string>> made;
  auto local = [&]() -> expected<std::string> {
    if (!made) {
      auto built = staging::write_node_bundle(*bundle, archive, scratch + "/bundle");
      made =
          built ? expected<std::string>{archive} : expected<std::string>{built.error()};
    }
    return *made;
  };
  const std::string what = "this build's";
  auto res = from_shared(use, "bin", bundle->hash, file, true, local, what);
  bool doubted = false;
  if (!res) {
    auto cache = staging::make_stager(dir + "/" + bundle->hash, use.nn);
    if (!cache)
      return cache.error();
    res = trusted_copy(**cache, file, true, use, &doubted);
    if (res) {
      if (auto why = checked(**cache, file, local, what); !why.empty()) {
        say_doubt(**cache, file, use, why);
        doubted = true;
        res = make_error(errc::unsatisfiable, "a doubted copy");
      }
    }
    if (!res) {
      auto path = local();
      if (!path)
        return path.error();
      res = doubted ? own_copy(use, archive, file, file, true)
                    : (*cache)->put_shared(archive, file, true);
      if (!res)
        return res;
      // The copy in place may be another submit's, made meanwhile.
      if (auto why = doubted ? "" : checked(**cache, file, local, what); !why.empty()) {
        say_doubt(**cache, file, use, why);
        doubted = true;
        res = own_copy(use, archive, file, file, true);
        if (!res)
          return res;
      }
    }
  }
  res->name = yarn_env::bundle_link;
  res->visibility = doubted ? "APPLICATION" : "PRIVATE";
  return res;
}

} // namespace tony
