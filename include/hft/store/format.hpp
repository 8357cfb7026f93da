// On-disk formats of the store layer: journal segments and the
// sequence-number file. All integers are little-endian (x86-64 native).
// Every layout below is pinned with static_assert; a change to any of them
// bumps the format version, and a file with a newer version is refused.
//
// A journal is a directory of fixed-size segment files "<number>.seg",
// number zero-padded to 8 digits ("00000001.seg"). Inside a segment, records
// grow up from the header and the sequence-number index grows down from the
// end of the file; the segment is full when they would meet.
//
//   0         64                                   data end      slot low      size
//   +---------+------+------+-----+----- ... ------+--- zero ---+------+-+------+------+
//   | Segment | rec0 | rec1 | ... |                |   (free)   | slot | | slot | slot |
//   | Header  |start |      |     |                |            | n-1  | |  1   |  0   |
//   +---------+------+------+-----+----- ... ------+------------+------+-+------+------+
//
// SegmentHeader, 64 bytes, written once by whoever creates the file:
//
//   offset size field             meaning
//   0      8    magic             "HFTJSEG\0"
//   8      2    format_version    kFormatVersion (2; 1 is read as well)
//   10     2    header_size       64
//   12     4    record_alignment  8 or 64: every record starts at a multiple
//   16     8    segment_number    the number in the file name
//   24     8    created_ns        CLOCK_REALTIME at creation
//   32     8    segment_size      size of the file in bytes
//   40     4    slot_size         4 (bytes per index slot)
//   44     4    flags             0
//   48     8    session_identity  session_identity() of the session that wrote
//                                 the journal; 0 = not recorded (version 1,
//                                 or a journal opened without an identity)
//   56     4    reserved          0
//   60     4    header_crc        CRC-32C of bytes 0..59
//
// Record, a 32-byte header followed by the caller's bytes:
//
//   offset size field             meaning
//   0      4    size              32 + gap + payload length; stored LAST with
//                                 release order, so 0 means "no record here"
//   4      4    crc               CRC-32C of: the payload, then header bytes
//                                 8..31, then `size` (4 bytes, little-endian)
//   8      8    seq               MsgSeqNum (0 for control records)
//   16     8    timestamp_ns      caller's timestamp (nanoseconds)
//   24     4    gap               bytes between the header and the payload
//                                 (the encoder's unused prefix room; not in the CRC)
//   28     2    flags             low byte: RecordFlag; high byte: caller's flags
//   30     2    reserved          0
//   32     gap  (unused)
//   32+gap n    payload           the exact wire bytes
//   The next record starts at align_up(offset + size, record_alignment).
//   While a claim is open (claim() returned room, commit() has not run) the
//   record's size is 0 and its seq holds kClaimMarker: recovery discards
//   such bytes as an uncommitted claim (nothing committed is lost), not as
//   a torn record.
//
// Control records (seq 0, flag kControl):
//   - the first record of every segment is a start record (kSegmentStart,
//     plus kEpochStart when it opens a new epoch) whose payload is a
//     SegmentStartPayload: the epoch this segment belongs to;
//   - a segment the writer left for the next one ends with a seal record
//     (kSegmentSeal) whose payload is a SegmentSealPayload.
//
// Index slot i (uint32 at size - 4*(i+1)): byte offset of the i-th indexed
// record of the segment. A data record is indexed when its seq is greater
// than the previous indexed seq of the epoch, so slots are in seq order.
// Slots are a cache of the records: recovery rebuilds them for the tail
// segment from the records, which remain the truth.
//
// Sequence-number file ("seqnums.dat", 192 bytes): a header and two slots.
// An update writes the slot holding the older generation, so a torn write
// leaves the other slot intact; open picks the valid slot with the highest
// generation.
//
//   offset size field             meaning
//   0      8    magic             "HFTSEQN\0"
//   8      2    format_version    kSeqNumFormatVersion (2; 1 is read as well)
//   10     2    header_size       64
//   12     4    slot_size         64
//   16     8    created_ns        CLOCK_REALTIME when the file was created
//   24     8    session_identity  as in the segment header (0: not recorded)
//   32     24   reserved          0
//   56     4    reserved          0
//   60     4    header_crc        CRC-32C of bytes 0..59
//   64     64   slot A            SeqNumSlot
//   128    64   slot B            SeqNumSlot
//
// SeqNumSlot:
//   0      8    generation        0 = never written
//   8      8    next_sender_seq
//   16     8    next_target_seq
//   24     8    epoch             session epoch (1 at creation, +1 per reset)
//   32     8    epoch_created_ns  CLOCK_REALTIME when the epoch began
//   40     20   reserved          0
//   60     4    crc               CRC-32C of bytes 0..59
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hft::store {

// Version 2 added session_identity in what version 1 left reserved (zero):
// a version-1 file reads as "identity not recorded".
inline constexpr std::uint16_t kFormatVersion = 2;
inline constexpr std::uint16_t kSeqNumFormatVersion = 2;
inline constexpr char kSegmentMagic[8] = {'H', 'F', 'T', 'J', 'S', 'E', 'G', '\0'};
inline constexpr char kSeqNumMagic[8] = {'H', 'F', 'T', 'S', 'E', 'Q', 'N', '\0'};

inline constexpr std::size_t kSegmentHeaderSize = 64;
inline constexpr std::size_t kRecordHeaderSize = 32;
/// The seq of a record whose claim is open (see the layout above).
inline constexpr std::uint64_t kClaimMarker = ~std::uint64_t{0};
inline constexpr std::size_t kSlotSize = 4;
inline constexpr std::size_t kPageSize = 4096;
/// Segments are a whole number of pages, at least this large (tests use it).
inline constexpr std::size_t kMinSegmentSize = 16 * 1024;
/// Slots hold 32-bit offsets.
inline constexpr std::size_t kMaxSegmentSize = std::size_t{1} << 32;

struct SegmentHeader {
  char magic[8];
  std::uint16_t format_version;
  std::uint16_t header_size;
  std::uint32_t record_alignment;
  std::uint64_t segment_number;
  std::int64_t created_ns;
  std::uint64_t segment_size;
  std::uint32_t slot_size;
  std::uint32_t flags;
  std::uint64_t session_identity;
  std::uint8_t reserved[4];
  std::uint32_t header_crc;
};

static_assert(sizeof(SegmentHeader) == kSegmentHeaderSize);
static_assert(offsetof(SegmentHeader, session_identity) == 48);
static_assert(offsetof(SegmentHeader, format_version) == 8);
static_assert(offsetof(SegmentHeader, header_size) == 10);
static_assert(offsetof(SegmentHeader, record_alignment) == 12);
static_assert(offsetof(SegmentHeader, segment_number) == 16);
static_assert(offsetof(SegmentHeader, created_ns) == 24);
static_assert(offsetof(SegmentHeader, segment_size) == 32);
static_assert(offsetof(SegmentHeader, slot_size) == 40);
static_assert(offsetof(SegmentHeader, flags) == 44);
static_assert(offsetof(SegmentHeader, header_crc) == 60);

/// Journal bits of RecordHeader::flags (low byte). The high byte is the
/// caller's (e.g. the session marks administrative messages).
enum RecordFlag : std::uint16_t {
  kRecordControl = 0x0001,       ///< not a message: seq is 0, never replayed
  kRecordSegmentStart = 0x0002,  ///< first record of a segment (with kRecordControl)
  kRecordEpochStart = 0x0004,    ///< the segment opens a new epoch (sequence reset)
  kRecordSegmentSeal = 0x0008,   ///< last record of a finished segment
  kRecordUnindexed = 0x0010,     ///< seq did not increase: kept, not replayable
};

struct RecordHeader {
  std::uint32_t size;
  std::uint32_t crc;
  std::uint64_t seq;
  std::int64_t timestamp_ns;
  std::uint32_t gap;
  std::uint16_t flags;
  std::uint16_t reserved;
};

static_assert(sizeof(RecordHeader) == kRecordHeaderSize);
static_assert(offsetof(RecordHeader, crc) == 4);
static_assert(offsetof(RecordHeader, seq) == 8);
static_assert(offsetof(RecordHeader, timestamp_ns) == 16);
static_assert(offsetof(RecordHeader, gap) == 24);
static_assert(offsetof(RecordHeader, flags) == 28);
static_assert(offsetof(RecordHeader, reserved) == 30);
static_assert(kSegmentHeaderSize % 64 == 0, "records after the header stay 64-byte aligned");

/// Payload of the start record that begins every segment.
struct SegmentStartPayload {
  std::uint64_t epoch;
  std::int64_t epoch_created_ns;
};
static_assert(sizeof(SegmentStartPayload) == 16);

/// Payload of the seal record that ends a finished segment.
struct SegmentSealPayload {
  std::uint64_t last_seq;       ///< last indexed seq in the segment (0 if none)
  std::uint32_t indexed_count;  ///< number of index slots in use
  std::uint32_t reserved;
};
static_assert(sizeof(SegmentSealPayload) == 16);

struct SeqNumHeader {
  char magic[8];
  std::uint16_t format_version;
  std::uint16_t header_size;
  std::uint32_t slot_size;
  std::int64_t created_ns;
  std::uint64_t session_identity;
  std::uint8_t reserved[28];
  std::uint32_t header_crc;
};
static_assert(sizeof(SeqNumHeader) == 64);
static_assert(offsetof(SeqNumHeader, session_identity) == 24);
static_assert(offsetof(SeqNumHeader, created_ns) == 16);
static_assert(offsetof(SeqNumHeader, header_crc) == 60);

struct SeqNumSlot {
  std::uint64_t generation;
  std::uint64_t next_sender_seq;
  std::uint64_t next_target_seq;
  std::uint64_t epoch;
  std::int64_t epoch_created_ns;
  std::uint8_t reserved[20];
  std::uint32_t crc;
};
static_assert(sizeof(SeqNumSlot) == 64);
static_assert(offsetof(SeqNumSlot, epoch_created_ns) == 32);
static_assert(offsetof(SeqNumSlot, crc) == 60);

inline constexpr std::size_t kSeqNumFileSize = 64 + 2 * sizeof(SeqNumSlot);

/// The identity a session's journals and sequence-number file record, from
/// its name (e.g. "FIX.4.4:VENUE->CLIENT"): FNV-1a 64, never 0. Opening a
/// store with an identity refuses files that record a different one.
constexpr std::uint64_t session_identity(std::string_view name) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h == 0 ? 1 : h;
}

/// Rounds `n` up to a multiple of `alignment` (a power of two).
constexpr std::size_t align_up(std::size_t n, std::size_t alignment) noexcept {
  return (n + alignment - 1) & ~(alignment - 1);
}

}  // namespace hft::store
