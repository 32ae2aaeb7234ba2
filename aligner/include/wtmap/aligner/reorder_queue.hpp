// wtmap aligner: a blocking queue that hands items out in the order of their numbers, whatever
// the order they arrive in -- several producers (one per GPU) finish numbered batches out of
// order, and the one consumer writes them in input order. close() ends it.
//
// push(n, item) waits while n >= next + window (next: the number pop() hands out next), so that
// at most `window` items wait here; the item numbered `next` is always let in, so producers that
// each push their own items in increasing number never deadlock (the producer holding the lowest
// number still owed is never blocked). Space: at most `window` items; push and pop O(log window)
// under one mutex.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace wtmap::aligner {

template <class T>
class ReorderQueue {
 public:
  explicit ReorderQueue(std::size_t window) { set_window(window); }
  // Before the first push (at least 1).
  void set_window(std::size_t window) {
    std::lock_guard<std::mutex> lock(mutex_);
    window_ = window == 0 ? 1 : window;
  }

  // False if the queue was closed (the consumer gave up): drop the item. Numbers are distinct
  // and, counted from 0, none is skipped.
  bool push(std::uint64_t number, T item) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || number < next_ + window_; });
    if (closed_) return false;
    items_.emplace(number, std::move(item));
    changed_.notify_all();
    return true;
  }
  // The item numbered `next`, waiting for it; empty once the queue is closed and that item is
  // not here (after a normal close every item was pushed, so the rest is empty too).
  std::optional<T> pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || (!items_.empty() && items_.begin()->first == next_); });
    if (items_.empty() || items_.begin()->first != next_) return std::nullopt;
    T item = std::move(items_.begin()->second);
    items_.erase(items_.begin());
    ++next_;
    changed_.notify_all();
    return item;
  }
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }

 private:
  std::size_t window_ = 1;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::uint64_t, T> items_;
  std::uint64_t next_ = 0;
  bool closed_ = false;
};

}  // namespace wtmap::aligner
