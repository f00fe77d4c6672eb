#include "plan.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include <metatf/core/format.hpp>

#include <hatf10.hpp>

namespace metatf::replay {

namespace {

constexpr std::size_t misfits_kept = 20;
constexpr std::uint64_t plan_magic = 0x324e414c50544d52;  // "RMTPLAN2"
constexpr std::size_t ops_buffered = 4096;              // per thread (96 KB), before they go to its file
constexpr std::uint64_t reuse_distance = 4096;         // calls between a free and another thread's malloc into its slot

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

void write_at(int fd, const void* from, std::size_t n, std::uint64_t offset) {
    for (std::size_t at = 0; at < n;) {
        const ssize_t done = pwrite(fd, static_cast<const char*>(from) + at, n - at, static_cast<off_t>(offset + at));
        if (done < 0 && errno == EINTR) continue;
        if (done == 0) errno = EIO;
        if (done <= 0) fail("cannot write the replay plan to a temporary file");
        at += static_cast<std::size_t>(done);
    }
}

// A thread's calls: the newest in memory, the rest in an unlinked file.
class OpFile {
public:
    explicit OpFile(const std::string& dir) {
        std::string name = dir + "/metatf-replay-XXXXXX";
        file_ = Fd(mkstemp(name.data()));
        if (file_.get() < 0) fail("cannot make a temporary file in " + dir + " for the replay plan");
        if (unlink(name.c_str()) != 0) fail("cannot unlink the replay plan's temporary file " + name);
        buffer_.reserve(ops_buffered);
    }
    std::uint64_t size() const { return written_ + buffer_.size(); }
    void push(const Op& op) {
        buffer_.push_back(op);
        if (buffer_.size() == ops_buffered) flush();
    }
    // Rewrites call `i`: a free whose block became known, or one left out.
    void patch(std::uint64_t i, const Op& op) {
        if (i >= written_) {
            buffer_[i - written_] = op;
        } else {
            write_at(file_.get(), &op, sizeof op, i * sizeof(Op));
        }
    }
    void flush() {
        write_at(file_.get(), buffer_.data(), buffer_.size() * sizeof(Op), written_ * sizeof(Op));
        written_ += buffer_.size();
        buffer_.clear();
    }
    Fd take() { return std::move(file_); }

private:
    Fd file_;
    std::uint64_t written_ = 0;
    std::vector<Op> buffer_;
};

// The first misfits by record, of however many: trimmed as they come.
class FirstMisfits {
public:
    void add(std::uint64_t record, std::string what) {
        ++count_;
        kept_.push_back({record, std::move(what)});
        if (kept_.size() >= 4 * misfits_kept) trim();
    }
    std::uint64_t count() const { return count_; }
    std::vector<Misfit> take() {
        trim();
        return std::move(kept_);
    }
    void add_all(FirstMisfits&& other) {
        count_ += other.count_ - other.kept_.size();
        for (Misfit& m : other.kept_) add(m.record, std::move(m.what));
    }

private:
    void trim() {
        std::sort(kept_.begin(), kept_.end(), [](const Misfit& a, const Misfit& b) { return a.record < b.record; });
        if (kept_.size() > misfits_kept) kept_.resize(misfits_kept);
    }
    std::uint64_t count_ = 0;
    std::vector<Misfit> kept_;
};

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
// the address shows has ended (allocate(), finish()). A freed slot is
// reused (new_slot()), so replay needs about as many slots as
// the trace has blocks live at once; a malloc that takes one another thread
// freed waits for that free, as any call on a block waits for the calls on
// it before (a slot counts every call on its blocks).
class Planner {
public:
    explicit Planner(const PlanOptions& options) : options_(options) {}

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
    void next_record() {
        if (sample_after_ != no_slot) {
            samples_.push_back({sample_after_, files_[sample_after_].size(), record_, plan_.events});
            files_[sample_after_].push(Op{Call::sample, false, static_cast<std::uint32_t>(plan_.series_live.size()), no_slot, 0, 0});
            plan_.series_live.push_back(live_bytes_);
            sample_after_ = no_slot;
        }
        ++record_;
    }
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

    struct Sample {  // a sample call, after record `record`, when `events` calls were counted
        std::uint32_t thread;
        std::uint64_t op, record, events;
    };
    void number_samples(std::vector<std::uint64_t> skipped);

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
        const auto [it, added] = threads_.try_emplace(thread, static_cast<std::uint32_t>(ids_.size()));
        if (added) {
            ids_.push_back(thread);
            files_.emplace_back(options_.temp_dir);
            freed_.emplace_back();
        }
        return it->second;
    }

    // One more call on thread `t`; every `every` calls, a sample after it
    // (and after the rest of its record: a moving realloc's free).
    void counted(std::uint32_t t) {
        ++plan_.events;
        if (options_.every != 0 && plan_.events % options_.every == 0) sample_after_ = t;
    }

    // A call on thread `thread`: `slot` the block passed in (for a malloc
    // into a slot another thread freed: that slot, waited for), `new_slot`
    // the one returned. Each slot counts the calls on it.
    void op(std::uint64_t thread, Call call, std::uint32_t slot, std::uint32_t new_slot, std::uint64_t size) {
        const std::uint32_t t = thread_index(thread);
        const bool waits = slot != no_slot && changed_by_[slot] != t;
        files_[t].push(Op{call, waits, slot, new_slot, slot == no_slot ? 0 : changes_[slot], size});
        plan_.largest_block = std::max(plan_.largest_block, size);
        if (new_slot != no_slot) touched(new_slot, t);
        if (slot != no_slot && slot != new_slot) {  // a free, or the block a realloc moved from
            touched(slot, t);
            freed_[t].push_back({slot, plan_.events});
        }
        counted(t);
    }
    void touched(std::uint32_t slot, std::uint32_t t) {
        changed_by_[slot] = t;
        ++changes_[slot];
    }

    // A slot for a block: the one thread `t` freed last (its memory is the
    // likeliest in the cache); else, for a malloc, which may wait for another thread's free (a
    // realloc passes its own block in `slot`, so it cannot), one another
    // thread freed at least `reuse_distance` calls before, which it has most
    // likely made by then; else a new one. The second of the pair: whether
    // the call waits. Every wait is for a call planned before it
    // (pair_oldest() keeps it so), so threads cannot wait in a circle.
    std::pair<std::uint32_t, bool> new_slot(std::uint32_t t, bool may_wait, std::uint64_t size) {
        const auto take = [&](std::uint32_t u) {
            const std::uint32_t s = u == t ? freed_[u].back().slot : freed_[u].front().slot;
            if (u == t) {
                freed_[u].pop_back();
            } else {
                freed_[u].pop_front();
            }
            sizes_[s] = size;
            return std::pair{s, u != t};
        };
        if (!freed_[t].empty()) return take(t);
        for (std::size_t i = 0; may_wait && i < freed_.size(); ++i) {
            const auto u = static_cast<std::uint32_t>((next_donor_ + i) % freed_.size());
            if (!freed_[u].empty() && freed_[u].front().event + reuse_distance <= plan_.events) {
                next_donor_ = u + 1;
                return take(u);
            }
        }
        if (sizes_.size() == no_slot - 1) throw std::runtime_error("the trace has more than 2^32 blocks live at once, more than replay holds");
        sizes_.push_back(size);
        changed_by_.push_back(t);
        changes_.push_back(0);
        return {static_cast<std::uint32_t>(sizes_.size() - 1), false};
    }

    // A malloc or realloc that returned a block at `address`. Another block
    // still live there must have been freed before: by a free waiting for
    // it, if another thread has one.
    void allocate(std::uint64_t thread, Call call, std::uint32_t from, std::uint64_t address, std::uint64_t size) {
        if (oldest(address) != no_slot && !pair_oldest(address)) {
            duplicates_.add(record_, "alloc of " + hex(address) + ", which is still live (a free of it frees the older block)");
        }
        const auto [s, waits] = new_slot(thread_index(thread), call == Call::malloc, size);
        if (const auto [it, added] = live_.try_emplace(address, s); !added) later_[address].push_back(s);
        live_bytes_ += size;
        plan_.peak_live_bytes = std::max(plan_.peak_live_bytes, live_bytes_);
        op(thread, call, waits ? s : from, s, size);
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
        waiting_[address].push_back({t, files_[t].size(), record_});
        files_[t].push(Op{Call::free, true, no_slot, no_slot, 0, 0});
        counted(t);
    }

    // Ends the oldest block at `address` by a waiting free of another thread
    // than its last call's (among the first few: a trace cannot make every
    // alloc search a long queue); false if there is none. The free moves to
    // here in its thread's calls: in its place it would wait for calls the
    // trace has after it, and hold up its thread's later calls, which other
    // threads' calls may be waiting for.
    bool pair_oldest(std::uint64_t address) {
        const auto w = waiting_.find(address);
        if (w == waiting_.end()) return false;
        const std::uint32_t s = oldest(address);
        std::deque<Waiting>& q = w->second;
        const auto last = q.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(q.size(), 64));
        const auto other = std::find_if(q.begin(), last, [&](const Waiting& x) { return x.thread != changed_by_[s]; });
        if (other == last) return false;
        files_[other->thread].patch(other->op, skip_op);
        files_[other->thread].push(Op{Call::free, true, s, no_slot, changes_[s], 0});
        touched(s, other->thread);
        freed_[other->thread].push_back({s, plan_.events});
        q.erase(other);
        if (q.empty()) waiting_.erase(w);
        forget(address);
        return true;
    }

    // The oldest live block at `address`, or no_slot.
    std::uint32_t oldest(std::uint64_t address) const {
        const auto it = live_.find(address);
        return it == live_.end() ? no_slot : it->second;
    }
    // Its life ends.
    void forget(std::uint64_t address) {
        const auto it = live_.find(address);
        live_bytes_ -= sizes_[it->second];
        const auto more = later_.find(address);
        if (more == later_.end()) return static_cast<void>(live_.erase(it));
        it->second = more->second.front();
        more->second.pop_front();
        if (more->second.empty()) later_.erase(more);
    }

    void resize(std::uint32_t slot, std::uint64_t size) {
        live_bytes_ += size - sizes_[slot];
        sizes_[slot] = size;
        plan_.peak_live_bytes = std::max(plan_.peak_live_bytes, live_bytes_);
    }

    void misfit(std::uint64_t record, std::string what) { misfits_.add(record, std::move(what)); }

    PlanOptions options_;
    std::uint64_t record_ = 0;
    std::uint64_t live_bytes_ = 0;
    std::uint32_t sample_after_ = no_slot;  // the thread of a call that a sample follows
    std::vector<Sample> samples_;
    Plan plan_;
    std::unordered_map<std::uint64_t, std::uint32_t> live_;               // address -> its oldest live slot
    std::unordered_map<std::uint64_t, std::deque<std::uint32_t>> later_;  // address -> its other live slots, if any, oldest first
    std::unordered_map<std::uint64_t, std::deque<Waiting>> waiting_;   // address -> frees waiting for an alloc of it
    std::unordered_map<std::uint64_t, std::uint32_t> threads_;           // thread id -> index
    std::vector<std::uint64_t> ids_;                                     // per index: the thread id
    std::vector<OpFile> files_;                                          // per index: its calls
    struct Freed {
        std::uint32_t slot;
        std::uint64_t event;  // the calls planned when it was freed
    };
    std::vector<std::deque<Freed>> freed_;                               // per index: slots it freed, in order
    std::size_t next_donor_ = 0;                                         // the thread whose slots a malloc tries first
    std::unordered_map<std::uint64_t, FollowUps> follow_ups_;            // per thread id
    std::vector<std::uint64_t> sizes_;                                   // per slot
    std::vector<std::uint32_t> changed_by_;                              // per slot: the thread of its last call
    std::vector<std::uint32_t> changes_;                                 // per slot: the calls on its blocks (modulo 2^32)
    FirstMisfits misfits_;
    FirstMisfits duplicates_;  // allocs at a live address
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
    std::vector<std::uint64_t> skipped;
    for (auto& [address, q] : waiting_) {
        for (const Waiting& w : q) {
            misfit(w.record, "free of " + hex(address) + ", which is never live (left out)");
            files_[w.thread].patch(w.op, skip_op);
            skipped.push_back(w.record);
            --plan_.events;
        }
    }
    number_samples(std::move(skipped));
    if (ids_.size() <= 1) {
        misfits_.add_all(std::move(duplicates_));
    } else {
        plan_.reordered = duplicates_.count();
    }
    plan_.misfit_count = misfits_.count();
    plan_.misfits = misfits_.take();
    if (options_.strict && !plan_.misfits.empty()) {
        throw std::runtime_error("record " + std::to_string(plan_.misfits[0].record) + ": " + plan_.misfits[0].what);
    }
    plan_.slots = static_cast<std::uint32_t>(sizes_.size());
    for (std::size_t t = 0; t < ids_.size(); ++t) {
        files_[t].flush();
        plan_.threads.push_back({ids_[t], files_[t].take(), files_[t].size()});
    }
    return std::move(plan_);
}

// The calls before each sample, not counting frees left out (the records
// `skipped`); a sample that follows one of those is left out too.
void Planner::number_samples(std::vector<std::uint64_t> skipped) {
    std::sort(skipped.begin(), skipped.end());
    for (const Sample& x : samples_) {
        const auto before = std::lower_bound(skipped.begin(), skipped.end(), x.record);
        if (before != skipped.end() && *before == x.record) {
            files_[x.thread].patch(x.op, skip_op);
            plan_.series_events.push_back(0);
        } else {
            plan_.series_events.push_back(x.events - static_cast<std::uint64_t>(before - skipped.begin()));
        }
    }
}

struct Header {
    std::uint64_t magic, slots, samples, threads;
};

}  // namespace

Fd& Fd::operator=(Fd&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) close(fd_);
        fd_ = o.release();
    }
    return *this;
}

Fd::~Fd() {
    if (fd_ >= 0) close(fd_);
}

Plan make_plan(const std::string& path, const PlanOptions& options) {
    Planner planner(options);
    hatf10::Reader reader(path);
    reader.visit([&](const auto& record) {
        planner.take(record);
        planner.next_record();
    });
    return planner.finish();
}

Fd write_plan_header(const Plan& plan) {
    Fd fd(memfd_create("metatf-replay-plan", 0));
    if (fd.get() < 0) fail("cannot make the plan's memory file");
    const Header h{plan_magic, plan.slots, plan.series_live.size(), plan.threads.size()};
    write_at(fd.get(), &h, sizeof h, 0);
    std::uint64_t at = sizeof h;
    for (const ThreadPlan& t : plan.threads) {
        const std::uint64_t entry[2] = {static_cast<std::uint64_t>(t.file.get()), t.ops};
        write_at(fd.get(), entry, sizeof entry, at);
        at += sizeof entry;
    }
    return fd;
}

PlanView read_plan_header(int fd) {
    Header h{};
    const auto read_at = [&](void* to, std::size_t n, std::uint64_t offset) {
        if (pread(fd, to, n, static_cast<off_t>(offset)) != static_cast<ssize_t>(n)) throw std::runtime_error("the replay plan is cut short");
    };
    read_at(&h, sizeof h, 0);
    if (h.magic != plan_magic || h.threads > 1 << 20) throw std::runtime_error("the replay plan is damaged");
    PlanView view{static_cast<std::uint32_t>(h.slots), h.samples, {}};
    for (std::uint64_t t = 0; t < h.threads; ++t) {
        std::uint64_t entry[2];
        read_at(entry, sizeof entry, sizeof h + t * sizeof entry);
        view.threads.push_back({static_cast<int>(entry[0]), entry[1]});
    }
    return view;
}

}  // namespace metatf::replay
