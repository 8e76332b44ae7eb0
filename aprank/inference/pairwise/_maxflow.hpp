// Boykov-Kolmogorov max-flow with the dynamic updates of Kohli and Torr, for the pairwise kind's
// max-marginals (Dokania et al. 2014, sec. 3). Written from the papers:
//   Y. Boykov, V. Kolmogorov, "An experimental comparison of min-cut/max-flow algorithms for
//   energy minimization in vision", PAMI 2004 (growth, augmentation, adoption of orphans; the
//   time-stamp/distance heuristic of the adoption's origin checks);
//   P. Kohli, P. Torr, "Efficiently solving dynamic Markov random fields using graph cuts",
//   ICCV 2005 (change a terminal capacity of the residual graph, keep the flow and the search
//   trees, repair only the changed node and re-solve).
//
// Graph: nodes 0..k-1, terminal capacities held as one net residual tr[i] (> 0: residual from
// the source, < 0: to the sink; the flow straight from source through i to sink is a constant
// and never needed, as values are re-summed from the labellings), arcs in CSR by tail with the
// index of the reverse ("sister") arc. A clamp sets tr[i] = +-infinity: no finite cut separates
// i from that terminal, and infinity minus any finite flow stays infinity (a huge finite
// constant added to the t-links instead would swamp the unary scores in floating point). The
// clamp is removed by undoing the recorded changes: the residual graph and the
// trees return exactly to the unclamped optimum.
//
// Label y_i = 1 iff i ends in the source tree: the source tree at termination is the set of
// nodes reachable from the source in the residual graph, the (unique) smallest minimum cut.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace aprank {
namespace maxflow {

typedef int64_t i64;

static const i64 TERMINAL = -1;   // parent of a tree root (linked to its terminal)
static const i64 ORPHAN = -2;     // parent of an orphan or a free node
static const char FREE = 0, SRC = 1, SNK = 2;

struct Graph {
    i64 k = 0;
    std::vector<i64> first, head, sister;   // CSR arcs by tail; sister = reverse arc
    std::vector<double> cap0, rcap;         // original and residual arc capacities
    std::vector<double> tr0, tr;            // original and residual net terminal capacities
    std::vector<i64> parent;                // arc from the node to its parent
    std::vector<char> tree;
    std::vector<i64> ts, dist;              // time stamp and distance to the terminal
    std::vector<char> queued, logged;
    // FIFO queues as vectors read from a moving head (no deque blocks to allocate per cut)
    struct Fifo {
        std::vector<i64> v;
        size_t at = 0;
        bool empty() const { return at == v.size(); }
        i64 front() const { return v[at]; }
        void pop_front() { if (++at == v.size()) { v.clear(); at = 0; } }
        void push_back(i64 x) { v.push_back(x); }
        void clear() { v.clear(); at = 0; }
    };
    Fifo active, orphans;
    std::vector<i64> log;                   // nodes whose tree changed since clear_log()
    i64 time = 0;
    bool recording = false;                 // keep the undo log (between clamp and unclamp)
    // One-tree re-cuts (see rest_without_trees): only the clamped node's tree grows, inside the
    // clamped node's side of the optimum; a free node there with terminal residual toward the
    // other terminal becomes a root of the other tree when met, and the path is augmented.
    bool one_tree = false;
    char grow = FREE, region = 0;
    std::vector<char> label;                // the optimum's labels (1: source side)
    double pushed = 0.0;                    // flow augmented since the clamp
    double tr_clamped = 0.0;                // the clamped node's residual before its clamp
    std::vector<double> rcap_rest, tr_rest; // the optimum's flow (one-tree re-cuts)
    std::vector<i64> pins;                  // nodes pinned to their side (see pin)
    // A check for a pending stop (Ctrl-C) every POLL_WORK arcs scanned: one cut of a dense
    // component can take seconds. ``pending`` is the caller's (the Cython wrapper asks
    // PyErr_CheckSignals; this header knows nothing of Python); a stopped solve returns at
    // once with ``stopped`` set, its flow and trees to be discarded.
    bool (*pending)(void*) = nullptr;
    void* pending_arg = nullptr;
    i64 work = 0;
    bool stopped = false;
    std::vector<std::pair<i64, double>> undo_rcap, undo_tr;
    std::vector<std::pair<i64, i64>> undo_parent;
    std::vector<std::pair<i64, char>> undo_tree;

    // Pairs (ea[e], eb[e]) with symmetric capacities w[e] >= 0 among k nodes, net terminal
    // capacities t[i] (source minus sink).
    static const i64 POLL_WORK = (i64)1 << 20;

    // Count ``w`` arcs scanned; true once a check has found a stop pending.
    inline bool poll(i64 w) {
        if (pending == nullptr || stopped) return stopped;
        work += w;
        if (work < POLL_WORK) return false;
        work = 0;
        stopped = pending(pending_arg);
        return stopped;
    }

    void build(i64 k_, const double* t, i64 m, const i64* ea, const i64* eb, const double* w) {
        k = k_;
        // one Graph serves many components: a component's one-tree re-cuts must not leave
        // the next one's cut growing a single tree inside the last one's sides
        one_tree = false; pins.clear();
        work = 0; stopped = false;
        first.assign(k + 1, 0);
        for (i64 e = 0; e < m; ++e) { ++first[ea[e] + 1]; ++first[eb[e] + 1]; }
        for (i64 i = 0; i < k; ++i) first[i + 1] += first[i];
        head.assign(2 * m, 0); sister.assign(2 * m, 0); cap0.assign(2 * m, 0.0);
        std::vector<i64> at(first.begin(), first.end() - 1);
        for (i64 e = 0; e < m; ++e) {
            i64 p = at[ea[e]]++, q = at[eb[e]]++;
            head[p] = eb[e]; head[q] = ea[e]; sister[p] = q; sister[q] = p;
            cap0[p] = cap0[q] = w[e];
        }
        tr0.assign(t, t + k);
        parent.assign(k, ORPHAN); tree.assign(k, FREE); ts.assign(k, 0); dist.assign(k, 0);
        queued.assign(k, 0); logged.assign(k, 0);
        reset();
    }

    // Zero flow, fresh trees: every node with terminal residual is a root (a cut from scratch).
    void reset() {
        rcap = cap0; tr = tr0;
        active.clear(); orphans.clear(); log.clear();
        time = 0; recording = false;
        undo_rcap.clear(); undo_tr.clear(); undo_parent.clear(); undo_tree.clear();
        for (i64 i = 0; i < k; ++i) {
            logged[i] = 0; queued[i] = 0; ts[i] = 0; dist[i] = 1;
            parent[i] = tr[i] != 0.0 ? TERMINAL : ORPHAN;
            tree[i] = tr[i] > 0.0 ? SRC : (tr[i] < 0.0 ? SNK : FREE);
            if (tree[i] != FREE) activate(i);
        }
    }

    inline void activate(i64 i) { if (!queued[i]) { queued[i] = 1; active.push_back(i); } }
    inline void set_tree(i64 i, char t) {
        if (tree[i] != t) {
            if (recording) undo_tree.push_back({i, tree[i]});
            tree[i] = t;
            if (!logged[i]) { logged[i] = 1; log.push_back(i); }
        }
    }
    inline void set_parent(i64 i, i64 a) {
        if (recording) undo_parent.push_back({i, parent[i]});
        parent[i] = a;
    }
    inline void set_tr(i64 i, double v) {
        if (recording) undo_tr.push_back({i, tr[i]});
        tr[i] = v;
    }
    inline void add_rcap(i64 a, double f) {
        if (recording) undo_rcap.push_back({a, rcap[a]});
        rcap[a] += f;
    }
    // q, free, becomes a root of tree t (one-tree re-cuts: not activated, so t does not grow)
    inline void root(i64 q, char t) { set_tree(q, t); set_parent(q, TERMINAL); dist[q] = 1; ts[q] = 0; }
    void clear_log() { for (i64 i : log) logged[i] = 0; log.clear(); }
    inline bool is_child(i64 q, i64 p) const { return parent[q] >= 0 && head[parent[q]] == p; }

    void orphan_children(i64 p) {
        for (i64 a = first[p]; a < first[p + 1]; ++a) {
            i64 q = head[a];
            if (tree[q] == tree[p] && is_child(q, p)) { set_parent(q, ORPHAN); orphans.push_back(q); }
        }
    }

    // Kohli-Torr: the residual net terminal capacity of node i becomes v (the flow kept); the
    // trees are repaired at i alone: i re-rooted at its terminal, or made an orphan.
    void set_terminal(i64 i, double v) {
        set_tr(i, v);
        char want = v > 0.0 ? SRC : (v < 0.0 ? SNK : FREE);
        if (want == FREE) {
            if (parent[i] == TERMINAL) { set_parent(i, ORPHAN); orphans.push_back(i); }
            return;
        }
        if (tree[i] != want && tree[i] != FREE) orphan_children(i);   // they lose their root
        set_tree(i, want);
        set_parent(i, TERMINAL); dist[i] = 1; ts[i] = 0;
        activate(i);
    }

    // Kohli-Torr's recycling of the residual graph: clamp i to label (1: source side, 0: sink
    // side) by an infinite terminal capacity, recording every change of the flow and the trees,
    // so that unclamp() returns exactly to the state of the last solve before the clamp (where
    // the next clamp starts: each re-solve pushes only the flow its own clamp adds).
    void clamp(i64 i, int to) {
        recording = !one_tree;
        if (one_tree) { grow = to ? SRC : SNK; region = label[i]; pushed = 0.0; tr_clamped = tr[i]; }
        set_terminal(i, to ? std::numeric_limits<double>::infinity()
                           : -std::numeric_limits<double>::infinity());
    }

    // After the optimum's solve, for re-cuts that grow one tree from the clamped node alone:
    // the flow stays, the search trees go (every node free). Clamping i in the source side S
    // adds flow only along paths inside S (arcs S -> T are saturated and stay so), from S's
    // spare source capacities into i, so a tree grown backwards from i inside S, stopping
    // where it meets spare capacity, finds every augmenting path; the source tree spanning all
    // of S, which the dynamic re-cuts keep, would send each path to a far root and re-adopt
    // whole subtrees each time one saturates. What the tree from i still holds at the end moves
    // to the sink side (the nodes that still reach i: a minimum cut of the clamped problem).
    // Clamping i in T is the mirror image.
    void rest_without_trees(const char* y) {
        label.assign(y, y + k);
        for (i64 i = 0; i < k; ++i) {
            tree[i] = FREE; parent[i] = ORPHAN; queued[i] = 0; ts[i] = 0; dist[i] = 0;
        }
        active.clear(); orphans.clear(); clear_log();
        one_tree = true; pins.clear();
        rcap_rest = rcap; tr_rest = tr;
    }

    // One-tree re-cuts: i keeps its label of the optimum in every later re-cut (an infinite
    // capacity to its side's terminal, kept by restore_rest). The state stays a maximum flow
    // of the pinned problem: i's side has no residual capacity toward the other terminal.
    // The flow later re-cuts draw from i is not recorded (its capacity stays infinite).
    void pin(i64 i) {
        pins.push_back(i);
        hold_pin(i);
    }
    // A pinned node's infinite capacity, set again by restore_rest.
    void hold_pin(i64 i) {
        tr[i] = label[i] ? std::numeric_limits<double>::infinity()
                         : -std::numeric_limits<double>::infinity();
    }

    // One-tree re-cuts: remove the clamp of i (to: the label it was clamped to) keeping the
    // re-cut's flow. The flow the clamp took in (or gave) at i stays, as a change of i's two
    // terminal capacities by the same amount (a constant added to every cut), so the state is
    // again a maximum flow of the unclamped problem, with no path between the sides (the
    // re-cut pushed only inside i's side). Its spare capacity now sits where the last re-cut
    // gathered it, next to the next sample's (samples taken in breadth-first order): the next
    // re-cut finds it close by instead of across the component.
    void release(i64 i, int to) {
        tr[i] = to ? tr_clamped - pushed : tr_clamped + pushed;
        for (i64 j : log) { tree[j] = FREE; parent[j] = ORPHAN; }
        clear_log();
    }

    // Back to the optimum's flow exactly (the rounding of released flows does not pile up).
    void restore_rest() {
        rcap = rcap_rest; tr = tr_rest;
        for (i64 i : pins) hold_pin(i);
    }
    void unclamp() {
        for (size_t r = undo_rcap.size(); r-- > 0;) rcap[undo_rcap[r].first] = undo_rcap[r].second;
        for (size_t r = undo_tr.size(); r-- > 0;) tr[undo_tr[r].first] = undo_tr[r].second;
        for (size_t r = undo_parent.size(); r-- > 0;) parent[undo_parent[r].first] = undo_parent[r].second;
        for (size_t r = undo_tree.size(); r-- > 0;) tree[undo_tree[r].first] = undo_tree[r].second;
        undo_rcap.clear(); undo_tr.clear(); undo_parent.clear(); undo_tree.clear();
        recording = false;
        // the solve ended with no active node and no orphan; so does the restored state (the
        // activity flags are cleared as nodes leave the queue)
    }

    double bottleneck_and_push(i64 mid) {
        i64 x = head[sister[mid]], z = head[mid];
        double f = rcap[mid];
        i64 u = x;
        while (parent[u] != TERMINAL) { i64 a = parent[u]; f = std::fmin(f, rcap[sister[a]]); u = head[a]; }
        f = std::fmin(f, tr[u]);
        u = z;
        while (parent[u] != TERMINAL) { i64 a = parent[u]; f = std::fmin(f, rcap[a]); u = head[a]; }
        f = std::fmin(f, -tr[u]);
        pushed += f;
        add_rcap(mid, -f); add_rcap(sister[mid], f);
        // the minimum is one of the residuals, so x - f == 0 exactly where it saturates
        u = x;
        while (parent[u] != TERMINAL) {
            i64 a = parent[u];
            add_rcap(sister[a], -f); add_rcap(a, f);
            if (rcap[sister[a]] == 0.0) { set_parent(u, ORPHAN); orphans.push_back(u); }
            u = head[a];
        }
        set_tr(u, tr[u] - f);
        if (tr[u] == 0.0) { set_parent(u, ORPHAN); orphans.push_back(u); }
        u = z;
        while (parent[u] != TERMINAL) {
            i64 a = parent[u];
            add_rcap(a, -f); add_rcap(sister[a], f);
            if (rcap[a] == 0.0) { set_parent(u, ORPHAN); orphans.push_back(u); }
            u = head[a];
        }
        set_tr(u, tr[u] + f);
        if (tr[u] == 0.0) { set_parent(u, ORPHAN); orphans.push_back(u); }
        return f;
    }

    // A new parent in p's tree for orphan p (the closest to the terminal), or p becomes free.
    void adopt(i64 p) {
        const char t = tree[p];
        const i64 INF = std::numeric_limits<i64>::max();
        i64 best = ORPHAN, dmin = INF;
        for (i64 a = first[p]; a < first[p + 1]; ++a) {
            i64 q = head[a];
            if (tree[q] != t) continue;
            if ((t == SRC ? rcap[sister[a]] : rcap[a]) <= 0.0) continue;
            // origin of q: up to the terminal, or to a node checked at this time
            i64 d = 0, u = q;
            while (true) {
                if (ts[u] == time) { d += dist[u]; break; }
                i64 a2 = parent[u];
                ++d;
                if (a2 == TERMINAL) { ts[u] = time; dist[u] = 1; break; }
                if (a2 == ORPHAN) { d = INF; break; }
                u = head[a2];
            }
            if (d == INF) continue;
            if (d < dmin) { dmin = d; best = a; }
            for (u = q; ts[u] != time; u = head[parent[u]]) { ts[u] = time; dist[u] = d--; }
        }
        if (best != ORPHAN) {
            set_parent(p, best); ts[p] = time; dist[p] = dmin + 1;
            return;
        }
        set_tree(p, FREE);
        for (i64 a = first[p]; a < first[p + 1]; ++a) {
            i64 q = head[a];
            if (tree[q] != t) continue;
            if ((t == SRC ? rcap[sister[a]] : rcap[a]) > 0.0) activate(q);
            if (is_child(q, p)) { set_parent(q, ORPHAN); orphans.push_back(q); }
        }
    }

    void adopt_all() {
        ++time;
        while (!orphans.empty()) {
            i64 p = orphans.front(); orphans.pop_front();
            if (poll(first[p + 1] - first[p] + 1)) return;
            // re-rooted by set_terminal since it was orphaned: nothing to adopt
            if (parent[p] == ORPHAN && tree[p] != FREE) adopt(p);
        }
    }

    // Max-flow from the current flow and trees. Returns the number of augmentations.
    i64 solve() {
        i64 paths = 0;
        if (!orphans.empty()) adopt_all();
        while (!active.empty()) {
            i64 p = active.front();
            if (poll(first[p + 1] - first[p] + 1)) return paths;
            if (tree[p] == FREE || (one_tree && tree[p] != grow)) {
                active.pop_front(); queued[p] = 0; continue;
            }
            i64 mid = -1;
            const char t = tree[p];
            for (i64 a = first[p]; a < first[p + 1]; ++a) {
                i64 q = head[a];
                if (t == SRC) {
                    if (rcap[a] <= 0.0) continue;
                    if (tree[q] == FREE) {
                        if (one_tree) {
                            if (label[q] != region) continue;
                            if (tr[q] < 0.0) { root(q, SNK); mid = a; break; }
                        }
                        set_tree(q, SRC); set_parent(q, sister[a]);
                        ts[q] = ts[p]; dist[q] = dist[p] + 1; activate(q);
                    } else if (tree[q] == SNK) { mid = a; break; }
                } else {
                    if (rcap[sister[a]] <= 0.0) continue;
                    if (tree[q] == FREE) {
                        if (one_tree) {
                            if (label[q] != region) continue;
                            if (tr[q] > 0.0) { root(q, SRC); mid = sister[a]; break; }
                        }
                        set_tree(q, SNK); set_parent(q, sister[a]);
                        ts[q] = ts[p]; dist[q] = dist[p] + 1; activate(q);
                    } else if (tree[q] == SRC) { mid = sister[a]; break; }
                }
            }
            if (mid < 0) { active.pop_front(); queued[p] = 0; continue; }
            // p stays at the front: it is scanned again once the trees are repaired
            bottleneck_and_push(mid);
            ++paths;
            adopt_all();
        }
        return paths;
    }
};

}  // namespace maxflow
}  // namespace aprank
