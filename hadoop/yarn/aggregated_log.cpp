#include "hadoop/yarn/aggregated_log.hpp"

#include <zlib.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <optional>

namespace tony::yarn {

namespace {

using hadoop::error;
using hadoop::error_code;
using hadoop::expected;

constexpr std::array<unsigned char, 16> bcfile_magic = {
    0xd1, 0x11, 0xd3, 0x68, 0x91, 0xb5, 0xd7, 0xb6,
    0x39, 0xdf, 0x41, 0x40, 0x92, 0xba, 0xe1, 0x50};

// The trailer: the meta index offset, the version, the magic.
constexpr size_t bcfile_tail = 8 + 4 + 16;

error bad(const std::string& what, size_t at) {
  return error{error_code::invalid_input, "not a YARN aggregated log (TFile): " + what +
                                              " at byte " + std::to_string(at)};
}

// Reads within one region of bytes, naming the offset of what it could not
// read; `base` is the region's offset in the file, for messages.
class cursor {
public:
  cursor(std::string_view data, size_t base)
      : data_(data)
      , base_(base) {
    // nop
  }

  bool at_end() const { return pos_ >= data_.size(); }
  size_t where() const { return base_ + pos_; }

  expected<int64_t> vlong(const char* what) {
    auto at = pos_;
    auto x = read_tfile_vlong(data_, &pos_);
    if (!x)
      return bad(std::string{"a malformed "} + what, base_ + at);
    return *x;
  }

  expected<std::string_view> bytes(int64_t n, const char* what) {
    if (n < 0 || static_cast<uint64_t>(n) > data_.size() - pos_)
      return bad(std::string{"a truncated "} + what + " (" + std::to_string(n) +
                     " bytes, " + std::to_string(data_.size() - pos_) + " left)",
                 where());
    auto result = data_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return result;
  }

  // Utils.readString: vint length (-1: null) and that many bytes.
  expected<std::string> string(const char* what) {
    auto n = vlong(what);
    if (!n)
      return n.error();
    if (*n == -1)
      return std::string{};
    auto b = bytes(*n, what);
    if (!b)
      return b.error();
    return std::string{*b};
  }

  // Java's DataOutput.writeUTF: an unsigned 16-bit length, then the bytes.
  expected<std::string> utf(const char* what) {
    auto len = bytes(2, what);
    if (!len)
      return len.error();
    auto n = (static_cast<unsigned char>((*len)[0]) << 8) |
             static_cast<unsigned char>((*len)[1]);
    auto b = bytes(n, what);
    if (!b)
      return b.error();
    return std::string{*b};
  }

  expected<int64_t> int_be(int width, const char* what) {
    auto b = bytes(width, what);
    if (!b)
      return b.error();
    uint64_t x = 0;
    for (auto c : *b)
      x = (x << 8) | static_cast<unsigned char>(c);
    if (width == 4)
      return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(x)));
    if (width == 2)
      return static_cast<int64_t>(static_cast<int16_t>(static_cast<uint16_t>(x)));
    return static_cast<int64_t>(x);
  }

private:
  std::string_view data_;
  size_t base_;
  size_t pos_ = 0;
};

struct region {
  int64_t offset = 0;
  int64_t compressed = 0;
  int64_t raw = 0;
};

expected<region> read_region(cursor& in) {
  region r;
  auto offset = in.vlong("block offset");
  if (!offset)
    return offset.error();
  auto compressed = in.vlong("block size");
  if (!compressed)
    return compressed.error();
  auto raw = in.vlong("block raw size");
  if (!raw)
    return raw.error();
  r.offset = *offset;
  r.compressed = *compressed;
  r.raw = *raw;
  return r;
}

} // namespace

// Inflates zlib streams (Hadoop's DefaultCodec, TFile's "gz"), one after
// the other, into exactly `raw` bytes.
expected<std::string> inflate_block(std::string_view in, int64_t raw, size_t at) {
  // The claim is checked before anything is allocated: deflate cannot
  // expand beyond its ratio, and no block of logs needs more than the cap.
  if (raw < 0 || raw > max_inflated_block ||
      static_cast<uint64_t>(raw) > static_cast<uint64_t>(in.size()) * max_inflation_ratio)
    return bad("a gz block of " + std::to_string(in.size()) + " bytes that claims " +
                   std::to_string(raw) + " bytes inflated (more than " +
                   std::to_string(max_inflation_ratio) + " times its size or " +
                   std::to_string(max_inflated_block >> 20) + " MiB)",
               at);
  std::string out(static_cast<size_t>(raw), '\0');
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK)
    return error{error_code::io, "cannot start zlib"};
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  for (;;) {
    auto rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0 || zs.avail_out == 0)
        break;
      inflateReset(&zs); // FinishOnFlushCompressionStream: another stream follows
      continue;
    }
    if ((rc == Z_OK || rc == Z_BUF_ERROR) && zs.avail_out == 0)
      break; // all `raw` bytes are there
    if (rc == Z_OK && zs.avail_in > 0)
      continue;
    std::string why = zs.msg ? zs.msg : rc == Z_OK ? "truncated" : std::to_string(rc);
    inflateEnd(&zs);
    return bad("a gz block that does not inflate to its " + std::to_string(raw) +
                   " bytes (zlib: " + why + ")",
               at);
  }
  auto produced = out.size() - zs.avail_out;
  inflateEnd(&zs);
  if (produced != out.size())
    return bad("a gz block of " + std::to_string(produced) +
                   " bytes where its index says " + std::to_string(raw),
               at);
  return out;
}

namespace {

// The raw bytes of a block.
expected<std::string> read_block(std::string_view file, const region& r,
                                 const std::string& compression) {
  if (r.offset < 0 || r.compressed < 0 || r.raw < 0 ||
      static_cast<uint64_t>(r.offset) > file.size() ||
      static_cast<uint64_t>(r.compressed) > file.size() - static_cast<size_t>(r.offset))
    return bad("a block (offset " + std::to_string(r.offset) + ", " +
                   std::to_string(r.compressed) + " bytes) outside the file of " +
                   std::to_string(file.size()) + " bytes",
               0);
  auto bytes =
      file.substr(static_cast<size_t>(r.offset), static_cast<size_t>(r.compressed));
  if (compression == "none") {
    if (r.raw != r.compressed)
      return bad("an uncompressed block whose sizes differ",
                 static_cast<size_t>(r.offset));
    return std::string{bytes};
  }
  if (compression == "gz")
    return inflate_block(bytes, r.raw, static_cast<size_t>(r.offset));
  return error{error_code::invalid_input,
               "the aggregated log is compressed with '" + compression +
                   "' (yarn.nodemanager.log-aggregation.compression-type); tony reads "
                   "none and gz only: use `yarn logs -applicationId` for it"};
}

// A value's chunks (Chunk.ChunkDecoder), concatenated.
expected<std::string> read_value(cursor& in) {
  std::string value;
  for (;;) {
    auto n = in.vlong("value chunk length");
    if (!n)
      return n.error();
    bool last = *n >= 0;
    auto len = last ? *n : -*n;
    auto b = in.bytes(len, "value chunk");
    if (!b)
      return b.error();
    value.append(b->data(), b->size());
    if (last)
      return value;
  }
}

// A container's value: its files, each as writeUTF(name),
// writeUTF(decimal length), the bytes.
expected<std::vector<aggregated_file>> read_files(std::string_view value, size_t at) {
  std::vector<aggregated_file> files;
  cursor in{value, at};
  while (!in.at_end()) {
    auto name = in.utf("log file name");
    if (!name)
      return name.error();
    auto len_text = in.utf("log file length");
    if (!len_text)
      return len_text.error();
    int64_t len = -1;
    if (!len_text->empty() && len_text->size() < 19 &&
        len_text->find_first_not_of("0123456789") == std::string::npos)
      len = std::stoll(*len_text);
    if (len < 0)
      return bad("log file " + *name + " with the length '" + *len_text + "'",
                 in.where());
    auto content = in.bytes(len, "log file");
    if (!content)
      return content.error();
    files.push_back({std::move(*name), std::string{*content}});
  }
  return files;
}

// The BCFile trailer, after the magic at the file's start and end: the meta
// index's offset.
expected<size_t> meta_index_offset(std::string_view file) {
  constexpr size_t tail = bcfile_tail;
  if (file.size() < 16 + tail ||
      std::memcmp(file.data(), bcfile_magic.data(), bcfile_magic.size()) != 0 ||
      std::memcmp(file.data() + file.size() - 16, bcfile_magic.data(), 16) != 0)
    return error{
        error_code::invalid_input,
        "not a YARN aggregated log: no TFile (BCFile) magic at its start and end "
        "(a file of " +
            std::to_string(file.size()) +
            " bytes; an IFile-format log or one still being written?)"};
  cursor trailer{file.substr(file.size() - tail, tail), file.size() - tail};
  auto meta_at = trailer.int_be(8, "meta index offset");
  auto major = trailer.int_be(2, "BCFile version");
  if (!meta_at || !major)
    return bad("a truncated trailer", file.size() - tail);
  if (*major != 1)
    return bad("BCFile version " + std::to_string(*major) + " (tony reads 1)",
               file.size() - tail + 8);
  if (*meta_at < 16 || static_cast<uint64_t>(*meta_at) > file.size() - tail)
    return bad("a meta index offset of " + std::to_string(*meta_at), file.size() - tail);
  return static_cast<size_t>(*meta_at);
}

// The meta index (from `meta_at` to the trailer): where BCFile.index (the
// data blocks) is, and its compression.
expected<std::pair<std::string, region>> find_data_index(std::string_view file,
                                                         size_t meta_at) {
  auto meta_bytes = file.substr(meta_at, file.size() - bcfile_tail - meta_at);
  cursor meta{meta_bytes, meta_at};
  auto count = meta.vlong("meta block count");
  if (!count)
    return count.error();
  if (*count < 0 || *count > 1024)
    return bad(std::to_string(*count) + " meta blocks", meta_at);
  std::optional<std::pair<std::string, region>> data_index;
  for (int64_t i = 0; i < *count; ++i) {
    auto name = meta.string("meta block name");
    if (!name)
      return name.error();
    auto compression = meta.string("meta block compression");
    if (!compression)
      return compression.error();
    auto r = read_region(meta);
    if (!r)
      return r.error();
    if (*name == "data:BCFile.index")
      data_index.emplace(*compression, *r);
  }
  if (!data_index)
    return bad("no BCFile.index meta block", meta_at);
  return std::move(*data_index);
}

// One data block's key/value pairs (`raw`, at `at` in the file), added to
// `result`.
expected<void> read_data_block(std::string_view raw, size_t at, aggregated_log& result) {
  cursor in{raw, at};
  while (!in.at_end()) {
    auto key_len = in.vlong("key length");
    if (!key_len)
      return key_len.error();
    auto key_bytes = in.bytes(*key_len, "key");
    if (!key_bytes)
      return key_bytes.error();
    auto key_at = in.where();
    cursor key_in{*key_bytes, key_at};
    auto key = key_in.utf("key");
    if (!key)
      return key.error();
    auto value_at = in.where();
    auto value = read_value(in);
    if (!value)
      return value.error();
    cursor v{*value, value_at};
    if (*key == "VERSION") {
      auto version = v.int_be(4, "version");
      if (!version)
        return version.error();
      result.version = static_cast<int32_t>(*version);
    } else if (*key == "APPLICATION_OWNER") {
      auto owner = v.utf("owner");
      if (!owner)
        return owner.error();
      result.owner = std::move(*owner);
    } else if (*key == "APPLICATION_ACL") {
      continue; // who may read: not ours to show
    } else {
      auto files = read_files(*value, value_at);
      if (!files)
        return files.error();
      result.containers.push_back({std::move(*key), std::move(*files)});
    }
  }
  return {};
}

} // namespace

const aggregated_file* aggregated_container::find(const std::string& name) const {
  for (auto& f : files)
    if (f.name == name)
      return &f;
  return nullptr;
}

const aggregated_container* aggregated_log::find(const std::string& container_id) const {
  for (auto& c : containers)
    if (c.container_id == container_id)
      return &c;
  return nullptr;
}

expected<int64_t> read_tfile_vlong(std::string_view data, size_t* pos) {
  auto need = [&](size_t n) { return data.size() - *pos >= n; };
  if (!need(1))
    return error{error_code::invalid_input, "truncated vlong"};
  int first = static_cast<signed char>(data[(*pos)++]);
  if (first >= -32)
    return static_cast<int64_t>(first);
  auto next = [&](size_t n) {
    uint64_t x = 0;
    for (size_t i = 0; i < n; ++i)
      x = (x << 8) | static_cast<unsigned char>(data[(*pos)++]);
    return x;
  };
  switch ((first + 128) / 8) {
  case 11:
  case 10:
  case 9:
  case 8:
  case 7:
    if (!need(1))
      return error{error_code::invalid_input, "truncated vlong"};
    return static_cast<int64_t>((first + 52) * 256) + static_cast<int64_t>(next(1));
  case 6:
  case 5:
  case 4:
  case 3:
    if (!need(2))
      return error{error_code::invalid_input, "truncated vlong"};
    return static_cast<int64_t>((first + 88) * 65536) + static_cast<int64_t>(next(2));
  case 2:
  case 1:
    if (!need(3))
      return error{error_code::invalid_input, "truncated vlong"};
    return static_cast<int64_t>((first + 112) * 16777216) + static_cast<int64_t>(next(3));
  default: {
    auto len = static_cast<size_t>(first + 129); // 4..8 bytes, big-endian, signed
    if (len < 4 || len > 8)
      return error{error_code::invalid_input, "corrupted vlong"};
    if (!need(len))
      return error{error_code::invalid_input, "truncated vlong"};
    auto x = next(len);
    auto shift = 64 - 8 * len; // sign-extend
    return static_cast<int64_t>(x << shift) >> shift;
  }
  }
}

expected<aggregated_log> parse_aggregated_log(std::string_view file) {
  auto meta_at = meta_index_offset(file);
  if (!meta_at)
    return meta_at.error();
  auto data_index = find_data_index(file, *meta_at);
  if (!data_index)
    return data_index.error();
  auto index_bytes = read_block(file, data_index->second, data_index->first);
  if (!index_bytes)
    return index_bytes.error();
  cursor index{*index_bytes, static_cast<size_t>(data_index->second.offset)};
  auto compression = index.string("data compression");
  if (!compression)
    return compression.error();
  auto blocks = index.vlong("data block count");
  if (!blocks)
    return blocks.error();
  if (*blocks < 0 || *blocks > (1 << 24))
    return bad(std::to_string(*blocks) + " data blocks", index.where());
  aggregated_log result;
  for (int64_t b = 0; b < *blocks; ++b) {
    auto r = read_region(index);
    if (!r)
      return r.error();
    auto raw = read_block(file, *r, *compression);
    if (!raw)
      return raw.error();
    if (auto added = read_data_block(*raw, static_cast<size_t>(r->offset), result);
        !added)
      return added.error();
  }
  return result;
}

std::vector<std::string> aggregated_log_dirs(const std::string& root,
                                             const std::string& user,
                                             const std::string& suffix,
                                             const std::string& app_id,
                                             const std::string& tfile_suffix) {
  auto base = root;
  while (base.size() > 1 && base.back() == '/')
    base.pop_back();
  base += "/" + user;
  // The application's sequence number: its bucket is that modulo 10000.
  auto last = app_id.rfind('_');
  int64_t seq = 0;
  if (last != std::string::npos)
    for (auto c : app_id.substr(last + 1))
      if (c >= '0' && c <= '9')
        seq = (seq * 10 + (c - '0')) % 100000000;
  char bucket[8];
  std::snprintf(bucket, sizeof(bucket), "%04d", static_cast<int>(seq % 10000));
  auto own = tfile_suffix.empty() ? suffix + "-tfile" : tfile_suffix;
  std::vector<std::string> dirs;
  dirs.push_back(base + "/bucket-" + own + "/" + bucket + "/" + app_id);
  dirs.push_back(base + "/" + own + "/" + app_id);
  if (own != suffix)
    dirs.push_back(base + "/" + suffix + "/" + app_id);
  return dirs;
}

} // namespace tony::yarn
