// Max-flow and every max-marginal of a small component (at most 64 samples) on a dense residual
// matrix with 64-bit node sets, for the pairwise kind (Dokania et al. 2014, sec. 3).
//
// Why a second max-flow: the groups that real groupings give (segments of one recording, boxes
// of one image) are cliques of 10-30 samples. On them the general Boykov-Kolmogorov code of
// _maxflow.hpp spends its time on per-arc bookkeeping (search trees, orphans, undo records of
// every tree change), while a breadth-first search over bit sets visits a whole clique in a few
// word operations (residual arcs out of / into a node are one 64-bit mask each).
//
// Max-marginals from one max-flow. Let S be the source side of the optimum (the nodes reachable
// from the source in its residual graph) and T the rest. Clamping i in S to the sink adds flow
// only along paths inside S: a residual path reaching i is reachable from the source, and the
// pushes inside S never open an arc into T (arcs S -> T are saturated at the optimum). So the
// clamped cut is the max-flow, in S's residual graph, from S's spare source capacities into i;
// what then still reaches i (i included) moves to the sink side, and that set is a minimum cut of
// the clamped problem. Clamping i in T is the mirror image (from i to T's spare sink
// capacities; what i still reaches moves to the source side). A re-cut starts from the
// optimum's flow (Kohli and Torr's recycling of the flow).
//
// Chained re-cuts. Let F_i be what flips when i is clamped (in S: what still reaches i). Every j
// in F_i has F_j inside F_i (the labellings optimal with y_i = 0 and with y_j = 0 form a lattice:
// their union and intersection are optimal too, and F_i, F_j are the least changes), and after
// i's re-cut nothing outside F_i reaches F_i along residual arcs. So j's re-cut need not start
// from the optimum: release i's clamp, leaving the flow i took in at i as a surplus (a deficit
// in T) that the search treats like a terminal residual, clamp j and push inside F_i alone. What
// still reaches j at the end is F_j: with no surplus or spare capacity left that reaches j, the
// flow is a maximum preflow, and its nodes reaching the clamp are the least sink side of a
// minimum cut (every arc into any minimum cut's sink side is saturated), the set a re-cut from
// the optimum finds. Each chain, over F_i, is undone by copying back the rows of the residual
// matrix it changed, so every chain starts from the optimum. (On the HJA-shaped groups of the
// benchmark most of the j in some F_i have F_j = F_i: a chained re-cut mostly moves one surplus
// to a neighbour.)
//
// Exactness: a push subtracts the path's smallest residual f from each residual on the path, so
// the saturated ones become exactly zero (x - x == 0) whatever the scale; zero and sign tests
// alone decide reachability. Values are never read from the flow (see _maxflow_cy.pyx).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace aprank {
namespace smallcut {

typedef int64_t i64;
typedef uint64_t u64;

static const int MAX_NODES = 64;

static inline int low_bit(u64 x) { return __builtin_ctzll(x); }
static inline u64 bit(int i) { return u64(1) << i; }

struct Dense {
    int k = 0;
    std::vector<double> r;          // r[u * k + v]: residual capacity of arc u -> v
    std::vector<double> c0;         // capacity of pair {u, v} (parallel pairs summed)
    double tr[MAX_NODES];           // net terminal residual: > 0 from the source, < 0 to the sink
    u64 out[MAX_NODES], in[MAX_NODES];   // out[u] bit v / in[v] bit u: r[u * k + v] > 0
    u64 nbr[MAX_NODES];             // bit v of nbr[u]: u and v are paired
    u64 side = 0;                   // the optimum's source side (label 1)
    u64 layer[MAX_NODES + 1];       // breadth-first layers of the last search
    int path[MAX_NODES + 1];
    // the optimum's residuals, for restore(); rows of r changed by the current re-cut
    std::vector<double> r_rest;
    double tr_rest[MAX_NODES];
    u64 out_rest[MAX_NODES], in_rest[MAX_NODES];
    u64 dirty = 0;
    u64 src_rest = 0, snk_rest = 0;     // the optimum's nodes with source / sink residual

    // Pairs (ea[e], eb[e]) with capacities w[e] >= 0 among k <= 64 nodes; net terminal
    // capacities t[i] (source minus sink).
    void build(int k_, const double* t, i64 m, const i64* ea, const i64* eb, const double* w) {
        k = k_;
        r.assign(size_t(k) * k, 0.0);
        for (i64 e = 0; e < m; ++e) {
            r[ea[e] * k + eb[e]] += w[e];
            r[eb[e] * k + ea[e]] += w[e];
        }
        c0 = r;
        for (int u = 0; u < k; ++u) { tr[u] = t[u]; nbr[u] = 0; }
        for (i64 e = 0; e < m; ++e) {
            if (w[e] > 0.0) { nbr[ea[e]] |= bit(int(eb[e])); nbr[eb[e]] |= bit(int(ea[e])); }
        }
        // capacities are symmetric: the residual arcs out of a node are those into it
        for (int u = 0; u < k; ++u) { out[u] = nbr[u]; in[u] = nbr[u]; }
        dirty = 0;
    }

    inline void put(int u, int v, double x) {
        r[u * k + v] = x;
        if (x > 0.0) { out[u] |= bit(v); in[v] |= bit(u); }
        else { out[u] &= ~bit(v); in[v] &= ~bit(u); }
    }
    // f is at most the residual of u -> v, so that arc stays >= 0 (exactly 0 when f is that
    // residual: x - x == 0) and the reverse arc, f > 0 more, is open: only the forward arc's
    // bits need a test.
    inline void push_arc(int u, int v, double f) {
        put(u, v, r[u * k + v] - f);
        r[v * k + u] += f;
        out[v] |= bit(u);
        in[u] |= bit(v);
        dirty |= bit(u) | bit(v);
    }
    static inline double least(double a, double b) { return b < a ? b : a; }   // no NaN here
    u64 terminal_mask(bool source) const {
        u64 m = 0;
        for (int u = 0; u < k; ++u)
            if (source ? tr[u] > 0.0 : tr[u] < 0.0) m |= bit(u);
        return m;
    }

    // Breadth-first search from the nodes ``from``, forwards along residual arcs (``forward``)
    // or backwards, inside ``region``, until a layer meets ``target``. The layers are kept in
    // layer[0..depth]; returns a node of ``target`` in the last one, or -1 (then ``reached`` is
    // everything reachable). No per-node parents: a path is read back through the layers.
    int search(u64 from, u64 region, u64 target, bool forward, int& depth, u64& reached) {
        u64 seen = from, front = from;
        depth = 0;
        layer[0] = from;
        while (front) {
            u64 next = 0;
            for (u64 b = front; b; b &= b - 1) next |= forward ? out[low_bit(b)] : in[low_bit(b)];
            next &= region & ~seen;
            if (!next) break;
            seen |= next;
            layer[++depth] = next;
            if (next & target) { reached = seen; return low_bit(next & target); }
            front = next;
        }
        reached = seen;
        return -1;
    }

    // The path found by search(): path[depth] = the node met, path[0] a node of layer 0, each
    // path[d - 1] in layer d - 1 and joined to path[d] by a residual arc (path[d - 1] -> path[d]
    // for a forward search, path[d] -> path[d - 1] for a backward one).
    // False when pushes since the search have saturated every way back.
    bool read_path(int hit, int depth, bool forward) {
        path[depth] = hit;
        for (int d = depth; d > 0; --d) {
            const int u = path[d];
            const u64 back = (forward ? in[u] : out[u]) & layer[d - 1];
            if (!back) return false;
            path[d - 1] = low_bit(back);
        }
        return true;
    }

    // As read_path, but a node with no way left towards layer 0 is taken out of its layer and
    // the walk backs up to try another (Dinic's dead ends): so one search serves every path of
    // its length, instead of one path per search. False when ``hit`` itself has no way left.
    bool next_path(int hit, int depth, bool forward) {
        path[depth] = hit;
        int d = depth;
        while (d > 0) {
            const int u = path[d];
            const u64 back = (forward ? in[u] : out[u]) & layer[d - 1];
            if (back) {
                path[d - 1] = low_bit(back);
                --d;
            } else {
                layer[d] &= ~bit(u);
                if (d == depth) return false;
                ++d;
            }
        }
        return true;
    }

    // The optimum: shortest augmenting paths from every spare source capacity to any spare sink
    // capacity until none is left; side = what the source still reaches (the smallest minimum
    // cut's source side, as _maxflow.hpp labels it).
    void solve() {
        const u64 all = (k == 64) ? ~u64(0) : bit(k) - 1;
        // the terminal masks change only at a path's two ends: kept up to date, not recounted
        u64 src = terminal_mask(true), snk = terminal_mask(false);
        while (true) {
            int depth;
            u64 reached;
            const int hit = search(src, all, snk, true, depth, reached);
            if (hit < 0) {
                side = reached;
                src_rest = src;
                snk_rest = snk;
                r_rest = r;
                for (int u = 0; u < k; ++u) { tr_rest[u] = tr[u]; out_rest[u] = out[u]; in_rest[u] = in[u]; }
                dirty = 0;
                return;
            }
            read_path(hit, depth, true);     // path[0] the source end, path[depth] = hit
            double f = least(-tr[hit], tr[path[0]]);
            for (int d = 1; d <= depth; ++d) f = least(f, r[path[d - 1] * k + path[d]]);
            // f is one of these residuals, so the saturated ones become exactly zero
            tr[hit] += f;
            tr[path[0]] -= f;
            if (tr[hit] == 0.0) snk &= ~bit(hit);
            if (tr[path[0]] == 0.0) src &= ~bit(path[0]);
            for (int d = 1; d <= depth; ++d) push_arc(path[d - 1], path[d], f);
        }
    }

    // Node i clamped to the label it does not take, re-solved inside ``region`` from the current
    // flow; returns the nodes whose label flips (i included) and adds to ``moved`` the flow that
    // the clamp took in (in S: pushed into i; in T: pushed out of i). From the optimum's flow,
    // region is i's side of the optimum. Call restore() to go back to the optimum.
    u64 recut(int i, u64 region, double& moved) {
        const bool in_src = (side >> i) & 1;
        u64 spare = 0;      // nodes of the region with residual to their own terminal, i aside
        for (u64 b = region & ~bit(i); b; b &= b - 1) {
            const int u = low_bit(b);
            if (in_src ? tr[u] > 0.0 : tr[u] < 0.0) spare |= bit(u);
        }
        while (true) {
            // in S: search backwards from i along arcs with residual into it; in T: forwards
            int depth;
            u64 reached;
            int hit = search(bit(i), region, spare, !in_src, depth, reached);
            if (hit < 0) return reached;
            // every spare node of the last layer, along the layers as long as a path is left
            // (i, the path's end, takes any flow: its clamp is infinite)
            // every path of this length from each spare node of the last layer (a blocking
            // flow); i, the paths' end, takes any flow: its clamp is infinite
            for (u64 targets = layer[depth] & spare; targets; targets &= targets - 1) {
                hit = low_bit(targets);
                while ((spare >> hit) & 1 && next_path(hit, depth, !in_src)) {
                    // path[0] = i; the flow runs hit -> ... -> i in S, i -> ... -> hit in T
                    double f = in_src ? tr[hit] : -tr[hit];
                    for (int d = 1; d <= depth; ++d)
                        f = least(f, in_src ? r[path[d] * k + path[d - 1]]
                                                : r[path[d - 1] * k + path[d]]);
                    tr[hit] += in_src ? -f : f;
                    moved += f;
                    if (tr[hit] == 0.0) spare &= ~bit(hit);
                    for (int d = 1; d <= depth; ++d) {
                        if (in_src) push_arc(path[d], path[d - 1], f);
                        else push_arc(path[d - 1], path[d], f);
                    }
                }
            }
        }
    }

    // The clamp of node i released after recut(i, ..., moved): the flow it took in stays where
    // the re-cut put it, as i's surplus (in S) or shortfall (in T), which the next re-cut of a
    // node that i reached moves on like a terminal residual.
    void release(int i, double moved) {
        if (moved == 0.0) return;
        tr[i] += (side >> i) & 1 ? moved : -moved;
        dirty |= bit(i);
    }

    u64 region_of(int i) const {
        const u64 all = (k == 64) ? ~u64(0) : bit(k) - 1;
        return ((side >> i) & 1 ? side : ~side) & all;
    }

    // Score change when the nodes ``flipped`` (all on one side of the optimum) change label:
    // their unary scores, and the pairs from them to the rest, which change from cut to uncut
    // (to the other side) or from uncut to cut (to their own side). Summed from the terms, never
    // from the flow.
    double delta(u64 flipped, const double* s) const {
        const bool from_src = (side & flipped) != 0;
        double d = 0.0;
        for (u64 b = flipped; b; b &= b - 1) {
            const int j = low_bit(b);
            d += from_src ? -s[j] : s[j];
            for (u64 c = nbr[j] & ~flipped; c; c &= c - 1) {
                const int q = low_bit(c);
                d += (((side >> q) & 1) != from_src) ? c0[j * k + q] : -c0[j * k + q];
            }
        }
        return d;
    }

    // Back to the optimum's flow, exactly.
    // (the changed rows of r copied back; the masks and terminals are a few words each)
    void restore() {
        for (u64 b = dirty; b; b &= b - 1) {
            const size_t row = size_t(low_bit(b)) * k;
            std::copy(r_rest.begin() + row, r_rest.begin() + row + k, r.begin() + row);
        }
        // a push changes the masks and terminal residuals of its two ends only, both dirty
        for (u64 b = dirty; b; b &= b - 1) {
            const int u = low_bit(b);
            tr[u] = tr_rest[u]; out[u] = out_rest[u]; in[u] = in_rest[u];
        }
        dirty = 0;
    }
};

}  // namespace smallcut
}  // namespace aprank
