#include "protocol/compression.h"

#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace exactly::protocol {

namespace {

absl::Status TooLarge(size_t max_output) {
  return absl::InvalidArgumentError(absl::StrCat(
      "decompressed records exceed the limit of ", max_output, " bytes"));
}

absl::StatusOr<std::string> GunzipBounded(std::string_view input,
                                          size_t max_output) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError("gzip: inflateInit2 failed");
  }
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  z.avail_in = static_cast<uInt>(input.size());
  int rc = Z_OK;
  char buf[64 * 1024];
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      return absl::InvalidArgumentError(
          absl::StrCat("gzip: corrupt input (zlib ", rc, ")"));
    }
    out.append(buf, sizeof buf - z.avail_out);
    if (out.size() > max_output) {
      inflateEnd(&z);
      return TooLarge(max_output);
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      return absl::InvalidArgumentError("gzip: truncated input");
    }
  }
  inflateEnd(&z);
  return out;
}

absl::StatusOr<std::string> GzipCompress(std::string_view input) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&z, input.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  z.avail_in = static_cast<uInt>(input.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return absl::InternalError("gzip: deflate failed");
  out.resize(z.total_out);
  return out;
}

absl::StatusOr<std::string> SnappyRaw(std::string_view input,
                                      size_t max_output) {
  size_t length = 0;
  if (!snappy::GetUncompressedLength(input.data(), input.size(), &length)) {
    return absl::InvalidArgumentError("snappy: corrupt block header");
  }
  if (length > max_output) return TooLarge(max_output);
  std::string out;
  if (!snappy::Uncompress(input.data(), input.size(), &out)) {
    return absl::InvalidArgumentError("snappy: corrupt block");
  }
  return out;
}

// The xerial framing: a 16-byte header (magic, version, compatible version),
// then blocks each prefixed with a big-endian int32 length.
absl::StatusOr<std::string> SnappyXerial(std::string_view input,
                                         size_t max_output) {
  input.remove_prefix(16);
  std::string out;
  while (!input.empty()) {
    if (input.size() < 4)
      return absl::InvalidArgumentError("snappy: truncated xerial block");
    uint32_t n = (static_cast<uint8_t>(input[0]) << 24) |
                 (static_cast<uint8_t>(input[1]) << 16) |
                 (static_cast<uint8_t>(input[2]) << 8) |
                 static_cast<uint8_t>(input[3]);
    input.remove_prefix(4);
    if (n > input.size())
      return absl::InvalidArgumentError("snappy: truncated xerial block");
    absl::StatusOr<std::string> block = SnappyRaw(
        input.substr(0, n), max_output - std::min(max_output, out.size()));
    if (!block.ok()) return block.status();
    out += *block;
    if (out.size() > max_output) return TooLarge(max_output);
    input.remove_prefix(n);
  }
  return out;
}

absl::StatusOr<std::string> Lz4Frame(std::string_view input,
                                     size_t max_output) {
  LZ4F_dctx* ctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION))) {
    return absl::InternalError("lz4: cannot create a context");
  }
  std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> guard(
      ctx, &LZ4F_freeDecompressionContext);
  std::string out;
  char buf[64 * 1024];
  const char* in = input.data();
  size_t left = input.size();
  size_t hint = 1;
  while (left > 0 && hint != 0) {
    size_t in_size = left;
    size_t out_size = sizeof buf;
    hint = LZ4F_decompress(ctx, buf, &out_size, in, &in_size, nullptr);
    if (LZ4F_isError(hint)) {
      return absl::InvalidArgumentError(
          absl::StrCat("lz4: corrupt frame (", LZ4F_getErrorName(hint), ")"));
    }
    out.append(buf, out_size);
    if (out.size() > max_output) return TooLarge(max_output);
    in += in_size;
    left -= in_size;
    if (in_size == 0 && out_size == 0) break;
  }
  if (hint != 0) return absl::InvalidArgumentError("lz4: truncated frame");
  return out;
}

absl::StatusOr<std::string> Lz4Compress(std::string_view input) {
  std::string out(LZ4F_compressFrameBound(input.size(), nullptr), '\0');
  size_t n = LZ4F_compressFrame(out.data(), out.size(), input.data(),
                                input.size(), nullptr);
  if (LZ4F_isError(n)) return absl::InternalError("lz4: compression failed");
  out.resize(n);
  return out;
}

absl::StatusOr<std::string> ZstdDecompress(std::string_view input,
                                           size_t max_output) {
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> stream(
      ZSTD_createDStream(), &ZSTD_freeDStream);
  if (!stream) return absl::InternalError("zstd: cannot create a stream");
  ZSTD_initDStream(stream.get());
  std::string out;
  char buf[64 * 1024];
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  size_t rc = 1;
  while (in.pos < in.size || rc != 0) {
    ZSTD_outBuffer o{buf, sizeof buf, 0};
    rc = ZSTD_decompressStream(stream.get(), &o, &in);
    if (ZSTD_isError(rc)) {
      return absl::InvalidArgumentError(
          absl::StrCat("zstd: corrupt frame (", ZSTD_getErrorName(rc), ")"));
    }
    out.append(buf, o.pos);
    if (out.size() > max_output) return TooLarge(max_output);
    if (in.pos == in.size && o.pos < o.size && rc != 0) {
      return absl::InvalidArgumentError("zstd: truncated frame");
    }
  }
  return out;
}

}  // namespace

std::string_view CompressionName(Compression codec) {
  switch (codec) {
    case Compression::kNone:
      return "none";
    case Compression::kGzip:
      return "gzip";
    case Compression::kSnappy:
      return "snappy";
    case Compression::kLz4:
      return "lz4";
    case Compression::kZstd:
      return "zstd";
  }
  return "unknown";
}

absl::StatusOr<std::string> Decompress(Compression codec,
                                       std::string_view input,
                                       size_t max_output) {
  switch (codec) {
    case Compression::kNone:
      if (input.size() > max_output) return TooLarge(max_output);
      return std::string(input);
    case Compression::kGzip:
      return GunzipBounded(input, max_output);
    case Compression::kSnappy: {
      static constexpr char kXerialMagic[] = "\x82SNAPPY\x00";
      if (input.size() >= 16 &&
          std::memcmp(input.data(), kXerialMagic, 8) == 0) {
        return SnappyXerial(input, max_output);
      }
      return SnappyRaw(input, max_output);
    }
    case Compression::kLz4:
      return Lz4Frame(input, max_output);
    case Compression::kZstd:
      return ZstdDecompress(input, max_output);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown compression codec ", static_cast<int>(codec)));
}

absl::StatusOr<std::string> Compress(Compression codec,
                                     std::string_view input) {
  switch (codec) {
    case Compression::kNone:
      return std::string(input);
    case Compression::kGzip:
      return GzipCompress(input);
    case Compression::kSnappy: {
      std::string out;
      snappy::Compress(input.data(), input.size(), &out);
      return out;
    }
    case Compression::kLz4:
      return Lz4Compress(input);
    case Compression::kZstd: {
      std::string out(ZSTD_compressBound(input.size()), '\0');
      size_t n =
          ZSTD_compress(out.data(), out.size(), input.data(), input.size(), 3);
      if (ZSTD_isError(n))
        return absl::InternalError("zstd: compression failed");
      out.resize(n);
      return out;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown compression codec ", static_cast<int>(codec)));
}

}  // namespace exactly::protocol
