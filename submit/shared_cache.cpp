#include "submit/shared_cache.hpp"

#include <filesystem>
#include <system_error>

#include "messages/error.hpp"
#include "runtime/staging/node_bundle.hpp"
#include "runtime/yarn/am_env.hpp"

namespace fs = std::filesystem;

namespace tony {

namespace {

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
  if (use.warn)
    use.warn("not using the cached " + cache.uri() + "/" + name + ": " +
             (doubt ? *doubt : describe(doubt.error())) +
             "; this job stages a copy of its own (remove that directory, or point "
             "[cluster] staging_dir at a directory only you can write, to cache it "
             "again)");
  return make_error(errc::unsatisfiable, "a doubted copy");
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
  if (doubted)
    return own_copy(use, path, "cache-" + hash + "-" + name, name, archive);
  // Absent: stage it, keeping a copy another submit put there meanwhile
  // (same content). Another size: a stale copy, replaced. Files are
  // written under a temporary name and renamed, so a copy is whole or
  // absent.
  if (!res)
    res = (*cache)->put_shared(path, name, archive);
  else if (res->size != size)
    res = (*cache)->put(path, name, archive);
  // Localized PRIVATE, like the binaries: the NodeManager keeps it in the
  // user's cache, so the next job with the same content on that node
  // starts without downloading or unpacking it again.
  if (res)
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
  bool doubted = false;
  auto res = trusted_copy(**cache, file, true, use, &doubted);
  if (!res) {
    auto archive = scratch + "/" + file;
    if (auto ok = staging::write_node_bundle(*bundle, archive, scratch + "/bundle"); !ok)
      return ok.error();
    res = doubted ? own_copy(use, archive, file, file, true)
                  : (*cache)->put_shared(archive, file, true);
    if (!res)
      return res;
  }
  res->name = yarn_env::bundle_link;
  res->visibility = doubted ? "APPLICATION" : "PRIVATE";
  return res;
}

} // namespace tony
