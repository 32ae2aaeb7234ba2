#include "igzip_input.hpp"

#include <isa-l/igzip_lib.h>

#include <algorithm>

namespace wtmap::aligner {
namespace {

constexpr std::size_t kInputBytes = std::size_t{1} << 20;

void start_member(inflate_state& state) {
  isal_inflate_init(&state);
  state.crc_flag = ISAL_GZIP;  // parse the gzip header, check the CRC-32 and length trailer
}

}  // namespace

IgzipInput::IgzipInput(hFILE* file, std::string name)
    : file_(file), name_(std::move(name)), state_(std::make_unique<inflate_state>()), input_(kInputBytes) {
  start_member(*state_);
}

IgzipInput::~IgzipInput() {
  if (file_ != nullptr) hclose_abruptly(file_);
}

Status IgzipInput::refill() {
  const ssize_t n = hread(file_, input_.data(), input_.size());
  if (n < 0) return Status{StatusCode::io_error, name_ + ": read error"};
  input_ended_ = n == 0;
  state_->next_in = input_.data();
  state_->avail_in = static_cast<std::uint32_t>(n);
  return {};
}

Status IgzipInput::error(int isal_code) const {
  const std::string where = name_ + ": gzip member " + std::to_string(member_) + ": ";
  switch (isal_code) {
    case ISAL_INVALID_WRAPPER:
      return corrupt_data(member_ == 1 ? name_ + ": not gzip data"
                                       : where + "the bytes after the previous member are no gzip header");
    case ISAL_UNSUPPORTED_METHOD:
      return corrupt_data(where + "compressed with a method other than deflate");
    case ISAL_INCORRECT_CHECKSUM:
      return corrupt_data(where + "CRC-32 or length mismatch (corrupt gzip data)");
    default:
      return corrupt_data(where + "corrupt gzip data (invalid deflate stream)");
  }
}

Result<std::size_t> IgzipInput::read(char* out, std::size_t capacity) {
  std::size_t produced = 0;
  while (produced < capacity && !finished_) {
    if (state_->avail_in == 0 && !input_ended_) WTMAP_TRY(refill());
    const std::size_t before = produced;
    state_->next_out = reinterpret_cast<std::uint8_t*>(out + produced);
    state_->avail_out = static_cast<std::uint32_t>(std::min<std::size_t>(capacity - produced, UINT32_MAX));
    const std::uint32_t offered = state_->avail_out;
    const int code = isal_inflate(state_.get());
    produced += offered - state_->avail_out;
    if (code < 0) return error(code);
    if (state_->block_state == ISAL_BLOCK_FINISH) {  // member done and checked; does another follow?
      if (state_->avail_in == 0 && !input_ended_) WTMAP_TRY(refill());
      if (state_->avail_in == 0) {
        finished_ = true;
        break;
      }
      std::uint8_t* next_in = state_->next_in;
      const std::uint32_t avail_in = state_->avail_in;
      start_member(*state_);
      state_->next_in = next_in;
      state_->avail_in = avail_in;
      ++member_;
    } else if (produced == before && state_->avail_in == 0 && input_ended_) {
      return corrupt_data(name_ + ": gzip member " + std::to_string(member_) +
                          ": truncated (the file ends inside the compressed data)");
    }
  }
  return produced;
}

std::uint64_t IgzipInput::compressed_bytes_read() const {
  const off_t at = htell(file_);
  return at < 0 ? 0 : static_cast<std::uint64_t>(at);
}

}  // namespace wtmap::aligner
