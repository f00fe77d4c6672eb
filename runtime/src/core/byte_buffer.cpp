#include "metatf/core/byte_buffer.hpp"

#include <algorithm>
#include <cstring>

namespace metatf::rt {

namespace {
std::unique_ptr<std::byte[], detail::BigFree> room(std::size_t n) {
    return std::unique_ptr<std::byte[], detail::BigFree>(static_cast<std::byte*>(detail::allocate_big(n)));
}
}  // namespace

void ByteBuffer::grow(std::size_t n) {
    const std::size_t capacity = std::max(capacity_ * 2, std::max<std::size_t>(size_ + n, 4096));
    auto bigger = room(capacity);
    if (size_ != 0) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = capacity;
}

void ByteBuffer::append(std::span<const std::byte> bytes) {
    if (!bytes.empty()) std::memcpy(extend(bytes.size()), bytes.data(), bytes.size());
}

void ByteBuffer::resize(std::size_t n, std::byte fill) {
    if (n <= size_) {
        size_ = n;
        return;
    }
    const std::size_t more = n - size_;
    std::memset(extend(more), std::to_integer<int>(fill), more);
}

std::byte* ByteBuffer::overwrite(std::size_t n) {
    if (capacity_ < n) {
        // Nothing is kept, so nothing is copied; the old block goes first, which bounds the peak.
        data_.reset();
        size_ = capacity_ = 0;
        data_ = room(n);
        capacity_ = n;
    }
    size_ = n;
    return data_.get();
}

}  // namespace metatf::rt
