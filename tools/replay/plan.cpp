#include "plan.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <deque>
#include <type_traits>
#include <unordered_map>

#include <metatf/core/format.hpp>

#include <hatf10.hpp>

namespace metatf::replay {

namespace {

constexpr std::size_t misfits_kept = 20;
constexpr std::uint64_t plan_magic = 0x314e414c50544d52;  // "RMTPLAN1"

std::string hex(std::uint64_t v) {
    std::string out = "0x";
    rt::append_digits(out, v, 16);
    return out;
}

// The follow-up records a realloc record announces on its thread: the
// alloc of the block it returned and the free of the one it released.
struct FollowUps {
    std::uint64_t alloc = 0, free = 0;
};

// Blocks by address. Records of different threads are in the order their
// logs were flushed, not the order of the calls (docs/tracers.md), so an
// address can be live twice in the trace (its reuse recorded before the
// free of its last life) and a free can come before its alloc. Each free is
// therefore paired with the oldest live block at its address, and a free of
// an address not live waits for a block there whose life another alloc at
// the address shows has ended (allocate(), finish()).
class Planner {
public:
    explicit Planner(bool strict) : strict_(strict) {}

    template <typename Record>
    void take(const Record& r) {
        if constexpr (std::is_same_v<Record, hatf10::Alloc>) {
            if (follows(r.thread, r.address, &FollowUps::alloc)) return;
            allocate(r.thread, Call::malloc, no_slot, r.address, r.size);
        } else if constexpr (std::is_same_v<Record, hatf10::Free>) {
            if (follows(r.thread, r.address, &FollowUps::free) || r.address == 0) return;
            release(r.thread, r.address);
        } else if constexpr (std::is_same_v<Record, hatf10::ReallocNoAlloc>) {
            resize_in_place(r.thread, r.oldAddress, r.size);
        } else if constexpr (std::is_same_v<Record, hatf10::ReallocAllocFree>) {
            // A move to its own address (a damaged trace): a realloc in place.
            if (r.oldAddress == r.newAddress) return resize_in_place(r.thread, r.oldAddress, r.size);
            move(r.thread, r.oldAddress, r.newAddress, r.size);
        } else if constexpr (std::is_same_v<Record, hatf10::ReallocAlloc>) {
            follow_ups_[r.thread] = {r.newAddress, 0};
            allocate(r.thread, Call::realloc, no_slot, r.newAddress, r.size);
        } else if constexpr (std::is_same_v<Record, hatf10::ReallocFree>) {
            // realloc(p, 0): glibc freed p when it was recorded; replayed as free(p).
            follow_ups_[r.thread] = {0, r.oldAddress};
            release(r.thread, r.oldAddress);
        }
    }
    void next_record() { ++record_; }
    Plan finish();

private:
    void resize_in_place(std::uint64_t thread, std::uint64_t address, std::uint64_t size) {
        const std::uint32_t s = oldest(address);
        if (s == no_slot) return misfit(record_, "realloc of " + hex(address) + ", which is not live (left out)");
        resize(s, size);
        op(thread, Call::realloc, s, s, size);
    }

    // The new block is made before the old one goes, as realloc does (and as the follow-ups say).
    void move(std::uint64_t thread, std::uint64_t from, std::uint64_t to, std::uint64_t size) {
        follow_ups_[thread] = {to, from};
        const std::uint32_t s = oldest(from);
        if (s == no_slot) misfit(record_, "realloc of " + hex(from) + ", which is not live (replayed as realloc(NULL))");
        allocate(thread, Call::realloc, s, to, size);
        if (s != no_slot) forget(from);
    }

    struct Waiting {  // a free of an address that was not live when it was read
        std::uint32_t thread;
        std::size_t op;  // its index in the thread's calls
        std::uint64_t record;
    };

    // Whether the record is the follow-up `which` of the thread's last realloc.
    bool follows(std::uint64_t thread, std::uint64_t address, std::uint64_t FollowUps::*which) {
        const auto it = follow_ups_.find(thread);
        if (it == follow_ups_.end()) return false;
        FollowUps& f = it->second;
        if (f.*which != 0 && f.*which == address) {
            f.*which = 0;
            if (f.alloc == 0 && f.free == 0) follow_ups_.erase(it);
            return true;
        }
        follow_ups_.erase(it);  // the tracer wrote none (another producer): the record is a call of its own
        return false;
    }

    std::uint32_t thread_index(std::uint64_t thread) {
        const auto [it, added] = threads_.try_emplace(thread, static_cast<std::uint32_t>(plan_.thread_ids.size()));
        if (added) {
            plan_.thread_ids.push_back(thread);
            plan_.ops.emplace_back();
        }
        return it->second;
    }

    void op(std::uint64_t thread, Call call, std::uint32_t slot, std::uint32_t new_slot, std::uint64_t size) {
        const std::uint32_t t = thread_index(thread);
        const bool waits = slot != no_slot && changed_by_[slot] != t;
        // A free waiting for its block's alloc waits for that one call.
        const std::uint32_t after = slot == no_slot ? 0 : changed_by_[slot] == no_slot ? 1 : changes_[slot];
        plan_.ops[t].push_back(Op{call, waits, slot, new_slot, after, size});
        plan_.largest_block = std::max(plan_.largest_block, size);
        if (new_slot != no_slot) {
            changed_by_[new_slot] = t;
            ++changes_[new_slot];
        }
        ++plan_.events;
    }

    std::uint32_t new_slot(std::uint64_t size) {
        if (plan_.slots == no_slot - 1) throw std::runtime_error("the trace allocates more than 2^32 blocks, more than replay holds");
        sizes_.push_back(size);
        changed_by_.push_back(no_slot);
        changes_.push_back(0);
        return plan_.slots++;
    }

    // A malloc or realloc that returned a block at `address`. Another block
    // still live there must have been freed before: by a free waiting for
    // it, if another thread has one.
    void allocate(std::uint64_t thread, Call call, std::uint32_t from, std::uint64_t address, std::uint64_t size) {
        if (oldest(address) != no_slot && !pair_oldest(address)) {
            duplicates_.push_back({record_, "alloc of " + hex(address) + ", which is still live (a free of it frees the older block)"});
        }
        const std::uint32_t s = new_slot(size);
        live_[address].push_back(s);
        live_bytes_ += size;
        plan_.peak_live_bytes = std::max(plan_.peak_live_bytes, live_bytes_);
        op(thread, call, from, s, size);
    }

    // A free of a live block ends the oldest; one of an address not live
    // waits for a block there (allocate(), finish()), with its slot unknown.
    void release(std::uint64_t thread, std::uint64_t address) {
        const std::uint32_t s = oldest(address);
        if (s != no_slot) {
            forget(address);
            return op(thread, Call::free, s, no_slot, 0);
        }
        const std::uint32_t t = thread_index(thread);
        waiting_[address].push_back({t, plan_.ops[t].size(), record_});
        plan_.ops[t].push_back(Op{Call::free, true, no_slot, no_slot, 0, 0});
        ++plan_.events;
    }

    // Ends the oldest block at `address` by a waiting free of another thread
    // than its last call's (among the first few: a trace cannot make every
    // alloc search a long queue); false if there is none.
    bool pair_oldest(std::uint64_t address) {
        const auto w = waiting_.find(address);
        if (w == waiting_.end()) return false;
        const std::uint32_t s = oldest(address);
        std::deque<Waiting>& q = w->second;
        const auto last = q.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(q.size(), 64));
        const auto other = std::find_if(q.begin(), last, [&](const Waiting& x) { return x.thread != changed_by_[s]; });
        if (other == last) return false;
        Op& free = plan_.ops[other->thread][other->op];
        free.slot = s;
        free.after = changes_[s];
        q.erase(other);
        if (q.empty()) waiting_.erase(w);
        forget(address);
        return true;
    }

    // The oldest live block at `address`, or no_slot.
    std::uint32_t oldest(std::uint64_t address) const {
        const auto it = live_.find(address);
        return it == live_.end() ? no_slot : it->second.front();
    }
    // Its life ends.
    void forget(std::uint64_t address) {
        const auto it = live_.find(address);
        live_bytes_ -= sizes_[it->second.front()];
        it->second.pop_front();
        if (it->second.empty()) live_.erase(it);
    }

    void resize(std::uint32_t slot, std::uint64_t size) {
        live_bytes_ += size - sizes_[slot];
        sizes_[slot] = size;
        plan_.peak_live_bytes = std::max(plan_.peak_live_bytes, live_bytes_);
    }

    void misfit(std::uint64_t record, std::string what) { plan_.misfits.push_back({record, std::move(what)}); }

    bool strict_;
    std::uint64_t record_ = 0;
    std::uint64_t live_bytes_ = 0;
    Plan plan_;
    std::unordered_map<std::uint64_t, std::deque<std::uint32_t>> live_;  // address -> its live slots, oldest first
    std::unordered_map<std::uint64_t, std::deque<Waiting>> waiting_;   // address -> frees waiting for an alloc of it
    std::unordered_map<std::uint64_t, std::uint32_t> threads_;           // thread id -> index
    std::unordered_map<std::uint64_t, FollowUps> follow_ups_;            // per thread id
    std::vector<std::uint64_t> sizes_;                                   // per slot
    std::vector<std::uint32_t> changed_by_;                              // per slot: the thread of its last call
    std::vector<std::uint32_t> changes_;                                 // per slot: the calls that made or changed it
    std::vector<Misfit> duplicates_;                                     // allocs at a live address
};

// Frees still waiting take the blocks still live at their address; what is
// left was never allocated, and is left out. In a trace of one thread an
// alloc at a live address is a misfit too (a free the tracer missed); in
// one of several it is what flushing logs does to the order, and counted.
Plan Planner::finish() {
    std::vector<std::uint64_t> addresses;
    for (const auto& [address, q] : waiting_) addresses.push_back(address);
    for (const std::uint64_t address : addresses) {
        while (oldest(address) != no_slot && pair_oldest(address)) {
        }
    }
    std::vector<Waiting> never;
    for (auto& [address, q] : waiting_) {
        for (const Waiting& w : q) {
            never.push_back(w);
            misfit(w.record, "free of " + hex(address) + ", which is never live (left out)");
        }
    }
    std::sort(never.begin(), never.end(), [](const Waiting& a, const Waiting& b) { return a.op > b.op; });
    for (const Waiting& w : never) {
        plan_.ops[w.thread].erase(plan_.ops[w.thread].begin() + static_cast<std::ptrdiff_t>(w.op));
        --plan_.events;
    }
    if (plan_.thread_ids.size() <= 1) {
        for (Misfit& m : duplicates_) misfit(m.record, std::move(m.what));
    } else {
        plan_.reordered = duplicates_.size();
    }
    std::sort(plan_.misfits.begin(), plan_.misfits.end(), [](const Misfit& a, const Misfit& b) { return a.record < b.record; });
    if (strict_ && !plan_.misfits.empty()) {
        throw std::runtime_error("record " + std::to_string(plan_.misfits[0].record) + ": " + plan_.misfits[0].what);
    }
    plan_.misfit_count = plan_.misfits.size();
    if (plan_.misfits.size() > misfits_kept) plan_.misfits.resize(misfits_kept);
    return std::move(plan_);
}

struct Header {
    std::uint64_t magic, slots, threads;
};

}  // namespace

Plan make_plan(const std::string& path, bool strict) {
    Planner planner(strict);
    hatf10::Reader reader(path);
    reader.visit([&](const auto& record) {
        planner.take(record);
        planner.next_record();
    });
    return planner.finish();
}

void write_plan(int fd, const Plan& plan) {
    const auto put = [&](const void* from, std::size_t n) {
        for (std::size_t at = 0; at < n;) {
            const ssize_t done = write(fd, static_cast<const char*>(from) + at, n - at);
            if (done < 0 && errno == EINTR) continue;
            if (done <= 0) throw std::runtime_error(std::string("cannot write the replay plan: ") + std::strerror(errno));
            at += static_cast<std::size_t>(done);
        }
    };
    const Header h{plan_magic, plan.slots, plan.ops.size()};
    put(&h, sizeof h);
    for (const auto& ops : plan.ops) {
        const std::uint64_t n = ops.size();
        put(&n, 8);
    }
    for (const auto& ops : plan.ops) put(ops.data(), ops.size() * sizeof(Op));
}

PlanView from_bytes(std::span<const std::byte> bytes) {
    Header h;
    if (bytes.size() < sizeof h) throw std::runtime_error("the replay plan is cut short");
    std::memcpy(&h, bytes.data(), sizeof h);
    if (h.magic != plan_magic || h.threads > (bytes.size() - sizeof h) / 8) throw std::runtime_error("the replay plan is damaged");
    PlanView view{static_cast<std::uint32_t>(h.slots), {}};
    std::size_t at = sizeof h + 8 * h.threads;
    for (std::uint64_t t = 0; t < h.threads; ++t) {
        std::uint64_t n;
        std::memcpy(&n, bytes.data() + sizeof h + 8 * t, 8);
        if (n > (bytes.size() - at) / sizeof(Op)) throw std::runtime_error("the replay plan is cut short");
        view.threads.emplace_back(reinterpret_cast<const Op*>(bytes.data() + at), n);
        at += n * sizeof(Op);
    }
    return view;
}

}  // namespace metatf::replay
