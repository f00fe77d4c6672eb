// A growable byte buffer that, unlike std::vector, hands out uninitialized
// room: a writer reserves a record with one capacity test and fills it by
// plain stores, and a reader decompresses a chunk into it without first
// clearing every byte zstd is about to write.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <utility>

#include "metatf/core/big_memory.hpp"
#include "metatf/core/bytes.hpp"

namespace metatf::rt {

class ByteBuffer {
public:
    ByteBuffer() = default;
    // A buffer moved from is empty, with no room.
    ByteBuffer(ByteBuffer&& o) noexcept
        : data_(std::move(o.data_)), size_(std::exchange(o.size_, 0)), capacity_(std::exchange(o.capacity_, 0)) {}
    ByteBuffer& operator=(ByteBuffer&& o) noexcept {
        data_ = std::move(o.data_);
        size_ = std::exchange(o.size_, 0);
        capacity_ = std::exchange(o.capacity_, 0);
        return *this;
    }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::byte* data() { return data_.get(); }
    const std::byte* data() const { return data_.get(); }
    // Pointers, so that a std::span views the buffer.
    std::byte* begin() { return data_.get(); }
    std::byte* end() { return data_.get() + size_; }
    const std::byte* begin() const { return data_.get(); }
    const std::byte* end() const { return data_.get() + size_; }
    void clear() { size_ = 0; }
    // n more bytes at the end, uninitialized; returns where they start.
    // `slack` more bytes past them may be written over: the next extend() overwrites them.
    METATF_INLINE std::byte* extend(std::size_t n, std::size_t slack = 0) {
        if (capacity_ - size_ < n + slack) grow(n + slack);
        std::byte* p = data_.get() + size_;
        size_ += n;
        return p;
    }
    void append(std::span<const std::byte> bytes);
    // Grows to n bytes, the new ones set to `fill`.
    void resize(std::size_t n, std::byte fill);
    // n bytes whose contents are left unspecified, to be written over
    // whole; returns where they start.
    std::byte* overwrite(std::size_t n);

private:
    void grow(std::size_t n);
    std::unique_ptr<std::byte[], detail::BigFree> data_;  // a chunk's room is big
    std::size_t size_ = 0, capacity_ = 0;
};

}  // namespace metatf::rt
