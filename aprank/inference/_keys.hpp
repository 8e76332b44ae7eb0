// The one ordering every rank kernel uses.
//
// A sample is (score, input index). Samples are ranked by descending score; equal scores are
// broken by ascending input index. This is the deterministic tie rule of aprank (ERRATA item 11):
// with it every exact algorithm sees the same strict total order, so they all pick the same
// ranking, ties included. Keeping the rule in one C++ header lets std::sort / std::nth_element
// and the hand-written partitions share it.
#pragma once
#include <cstdint>

struct Key {
    double s;    // score
    int64_t i;   // index of the sample in the caller's array
};

// True when a is ranked above b.
static inline bool key_before(const Key& a, const Key& b) {
    return (a.s > b.s) | ((a.s == b.s) & (a.i < b.i));
}

static inline bool operator<(const Key& a, const Key& b) { return key_before(a, b); }
