#include "submit/shared_cache.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "base/files.hpp"
#include "messages/error.hpp"
#include "runtime/staging/node_bundle.hpp"
#include "runtime/yarn/am_env.hpp"
#include "submit/content_check.hpp"

namespace fs = std::filesystem;

namespace tony {

namespace {

void say_doubt(staging::stager& cache, const std::string& name, const cache_use& use,
               const std::string& why) {
  if (use.warn)
    use.warn("not using the cached " + cache.uri() + "/" + name + ": " + why +
             "; this job stages a copy of its own (remove that directory, or point "
             "[cluster] staging_dir at a directory only you can write, to cache it "
             "again)");
}

// The cached copy `name` in `cache`, when it is there and trusted; an
// absent copy is errc::unsatisfiable (as stat says), a doubted one too,
// after saying why.
expected<local_resource> trusted_copy(staging::stager& cache, const std::string& name,
                                      bool archive, const cache_use& use, bool* doubted) {
  auto res = cache.stat(name, archive);
  if (!res)
    return res;
  auto doubt = cache.doubt(name, use.user);
  if (doubt && doubt->empty())
    return res;
  *doubted = true;
  say_doubt(cache, name, use, doubt ? *doubt : describe(doubt.error()));
  return make_error(errc::unsatisfiable, "a doubted copy");
}

// What tells the cached copy `name` apart (content_check.hpp), with what
// the file system says of it; empty where nothing can be compared (object
// stores).
struct staged_print {
  staging::staged_content content;
  std::string print;
};

expected<staged_print> print_of(staging::stager& cache, const std::string& name) {
  auto content = cache.content(name);
  if (!content)
    return content.error();
  staged_print out{*content, {}};
  if (content->path.empty() && content->algorithm.empty())
    return out;
  auto print = staged_fingerprint(*content);
  if (!print)
    return print.error();
  out.print = *print;
  return out;
}

// Why the cached copy `name` may not hold the bytes of the local file
// `local` (`what` names it for the user): empty when it does, or where the
// file system keeps nothing to compare; `*print` gets the copy's
// fingerprint.
std::string content_doubt(staging::stager& cache, const std::string& name,
                          const std::string& local, const std::string& what,
                          std::string* print = nullptr) {
  auto there = print_of(cache, name);
  if (!there)
    return "cannot check its content: " + describe(there.error());
  if (there->print.empty())
    return {};
  auto here = local_fingerprint(there->content, local);
  if (!here)
    return "cannot check its content: " + describe(here.error());
  if (*here != there->print)
    return "its content is not " + what + " (" + there->print + " there, " + *here +
           " here)";
  if (print)
    *print = there->print;
  return {};
}

// The private file in which this user's tony-submit keeps the fingerprint
// of the node bundle it last checked at `uri` (~/.tony/cache), so that the
// next submission of the same build compares the copy's checksum with it
// instead of making the archive again; empty when there is no private
// place for it.
std::string memo_path(const std::string& uri) {
  std::string why;
  auto dir = base::private_home_dir("cache", why);
  if (!dir)
    return {};
  return *dir + "/bundle-" + staging::text_hash(uri);
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
  if (auto why = content_doubt(**cache, name, path, path + "'s"); !why.empty()) {
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
  auto cache = staging::make_stager(dir + "/" + bundle->hash, use.nn);
  if (!cache)
    return cache.error();
  const std::string file = "tony.tgz";
  const auto uri = (*cache)->uri() + "/" + file;
  auto archive = scratch + "/" + file;
  bool made = false;
  auto make = [&]() -> expected<void> {
    if (made)
      return ok;
    made = true;
    return staging::write_node_bundle(*bundle, archive, scratch + "/bundle");
  };
  bool doubted = false;
  auto res = trusted_copy(**cache, file, true, use, &doubted);
  // A copy checked before by this user (its checksum as remembered) is
  // used as it is; else the archive is made here, as reproducibly as the
  // copy was, and compared.
  if (res) {
    auto there = print_of(**cache, file);
    if (!there || there->print.empty() || !memo_says(uri, there->print)) {
      if (auto built = make(); !built)
        return built.error();
      std::string print;
      if (auto why = content_doubt(**cache, file, archive, "this build's", &print);
          !why.empty()) {
        say_doubt(**cache, file, use, why);
        doubted = true;
        res = make_error(errc::unsatisfiable, "a doubted copy");
      } else {
        write_memo(uri, print);
      }
    }
  }
  if (!res) {
    if (auto built = make(); !built)
      return built.error();
    res = doubted ? own_copy(use, archive, file, file, true)
                  : (*cache)->put_shared(archive, file, true);
    if (!res)
      return res;
    if (!doubted) {
      // The copy in place may be another submit's, made meanwhile.
      std::string print;
      if (auto why = content_doubt(**cache, file, archive, "this build's", &print);
          !why.empty()) {
        say_doubt(**cache, file, use, why);
        doubted = true;
        res = own_copy(use, archive, file, file, true);
        if (!res)
          return res;
      } else {
        write_memo(uri, print);
      }
    }
  }
  res->name = yarn_env::bundle_link;
  res->visibility = doubted ? "APPLICATION" : "PRIVATE";
  return res;
}

} // namespace tony
