#include "submit/content_check.hpp"

#include <isa-l/crc.h>

#include <array>
#include <fstream>
#include <regex>
#include <vector>

#include <openssl/evp.h>

#include "hadoop/crypto.hpp"

namespace tony {

namespace {

void put_big_endian(std::string& out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i)
    out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

// One digest of `data` (EVP_md5(), ...), as raw bytes.
std::string digest(const EVP_MD* md, const std::string& data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &len, md, nullptr);
  return std::string(reinterpret_cast<const char*>(out.data()), len);
}

// CRC32C as Hadoop's DataChecksum computes it (ISA-L's iSCSI CRC,
// initialized and inverted as the standard one).
uint32_t crc32c(const unsigned char* data, size_t size) {
  return ~crc32_iscsi(const_cast<unsigned char*>(data), static_cast<int>(size),
                      0xFFFFFFFFu);
}

struct hdfs_kind {
  int64_t crc_per_block = 0;
  int32_t bytes_per_crc = 0;
};

// "MD5-of-<crcPerBlock>MD5-of-<bytesPerCRC>CRC32C", the name of Hadoop's
// MD5MD5CRC32CastagnoliFileChecksum (HDFS's default); nullopt for any
// other (CRC32, COMPOSITE-CRC).
std::optional<hdfs_kind> kind_of(const std::string& algorithm) {
  static const std::regex name{R"(MD5-of-(\d{1,18})MD5-of-(\d{1,9})CRC32C)"};
  std::smatch m;
  if (!std::regex_match(algorithm, m, name))
    return std::nullopt;
  hdfs_kind k;
  k.crc_per_block = std::stoll(m[1].str());
  k.bytes_per_crc = static_cast<int32_t>(std::stol(m[2].str()));
  if (k.bytes_per_crc <= 0)
    return std::nullopt;
  return k;
}

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

std::optional<std::string> hdfs_file_checksum(const std::string& path, int64_t block_size,
                                              int32_t bytes_per_crc,
                                              int64_t crc_per_block) {
  if (block_size <= 0 || bytes_per_crc <= 0 || block_size % bytes_per_crc != 0)
    return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  // Each block's MD5 covers its chunks' CRCs, big-endian, as the DataNode
  // keeps them; the file's covers the blocks' MD5s.
  std::string block_md5s;
  std::string crcs;
  std::vector<unsigned char> chunk(static_cast<size_t>(bytes_per_crc));
  int64_t in_block = 0;
  for (;;) {
    in.read(reinterpret_cast<char*>(chunk.data()), bytes_per_crc);
    auto got = static_cast<size_t>(in.gcount());
    if (got == 0)
      break;
    put_big_endian(crcs, crc32c(chunk.data(), got), 4);
    in_block += static_cast<int64_t>(got);
    if (in_block == block_size) {
      block_md5s += digest(EVP_md5(), crcs);
      crcs.clear();
      in_block = 0;
    }
  }
  if (in.bad())
    return std::nullopt;
  if (!crcs.empty())
    block_md5s += digest(EVP_md5(), crcs);
  // Hadoop digests the whole buffer it wrote the blocks' MD5s into: 32
  // bytes at first, doubled as it fills, zeros past the last MD5 (an empty
  // file's checksum is that of 32 zeros).
  size_t buffer = 32;
  while (buffer < block_md5s.size())
    buffer *= 2;
  block_md5s.resize(buffer, '\0');
  std::string bytes;
  put_big_endian(bytes, static_cast<uint32_t>(bytes_per_crc), 4);
  put_big_endian(bytes, static_cast<uint64_t>(crc_per_block), 8);
  bytes += digest(EVP_md5(), block_md5s);
  return hadoop::hex_encode(bytes);
}

expected<std::string> staged_fingerprint(const staging::staged_content& staged) {
  if (!staged.path.empty()) {
    auto sum = staging::file_sha256(staged.path);
    if (sum.empty())
      return make_error(errc::infrastructure, "cannot read " + staged.path);
    return "sha256:" + sum;
  }
  if (staged.algorithm.empty())
    return make_error(errc::unsatisfiable, "the file system keeps no checksum");
  if (!kind_of(staged.algorithm))
    return make_error(errc::unsatisfiable,
                      "HDFS checksums it as " + staged.algorithm +
                          ", which tony does not compute (it computes HDFS's default, "
                          "MD5 of MD5 of CRC32C: dfs.checksum.type CRC32C and "
                          "dfs.checksum.combine.mode MD5MD5CRC)");
  return staged.algorithm + ":" + lower(staged.bytes);
}

expected<std::string> local_fingerprint(const staging::staged_content& staged,
                                        const std::string& path) {
  if (!staged.path.empty()) {
    auto sum = staging::file_sha256(path);
    if (sum.empty())
      return make_error(errc::infrastructure, "cannot read " + path);
    return "sha256:" + sum;
  }
  auto kind = kind_of(staged.algorithm);
  if (!kind)
    return staged_fingerprint(staged).error();
  auto sum = hdfs_file_checksum(path, staged.block_size, kind->bytes_per_crc,
                                kind->crc_per_block);
  if (!sum)
    return make_error(errc::infrastructure, "cannot checksum " + path +
                                                " as HDFS does (block size " +
                                                std::to_string(staged.block_size) + ")");
  return staged.algorithm + ":" + *sum;
}

} // namespace tony
