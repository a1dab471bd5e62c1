"""The one-to-one assignment of greatest total weight: the Hungarian algorithm, on small blocks.

Candidate pairs form a sparse bipartite graph; its connected components (`blocks`) are solved
apart, each exactly (`hungarian`). A block larger than `EXACT_LIMIT` on its smaller side keeps
only each row's `KEEP_BEST` heaviest edges and is split again; what is still too large is paired
best first (`greedy`), so a run's cost stays bounded whatever the candidates. Weights are
integers, so the result never depends on float rounding, and ties go to the lower row and
column numbers the caller gave.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

Edges = Mapping[tuple[int, int], int]  # (row, column) -> weight > 0

EXACT_LIMIT = 150  # rows or columns of a block solved exactly: about 150**3 steps at most
KEEP_BEST = 4


def best_assignment(edges: Edges) -> list[tuple[int, int]]:
    """The pairs (row, column), each row and column at most once, of greatest total weight."""
    pairs: list[tuple[int, int]] = []
    for block in blocks(edges):
        rows = {r for r, _ in block}
        cols = {c for _, c in block}
        if min(len(rows), len(cols)) > EXACT_LIMIT:
            trimmed = _keep_best(block)
            for part in blocks(trimmed):
                small = min(len({r for r, _ in part}), len({c for _, c in part})) <= EXACT_LIMIT
                pairs += hungarian(part) if small else greedy(part)
        else:
            pairs += hungarian(block)
    return sorted(pairs)


def blocks(edges: Edges) -> list[dict[tuple[int, int], int]]:
    """The connected components of the graph, each as its own edges, in order of first row."""
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(node: tuple[str, int]) -> tuple[str, int]:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for row, col in sorted(edges):
        a, b = find(("r", row)), find(("c", col))
        if a != b:
            parent[max(a, b)] = min(a, b)
    grouped: dict[tuple[str, int], dict[tuple[int, int], int]] = defaultdict(dict)
    for (row, col), weight in sorted(edges.items()):
        grouped[find(("r", row))][(row, col)] = weight
    return list(grouped.values())


def _keep_best(edges: Edges) -> dict[tuple[int, int], int]:
    by_row: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (row, col), weight in edges.items():
        by_row[row].append((-weight, col))
    return {(row, col): -negative for row, found in by_row.items()
            for negative, col in sorted(found)[:KEEP_BEST]}


def greedy(edges: Edges) -> list[tuple[int, int]]:
    """Heaviest pairs first, skipping any whose row or column is taken."""
    used_rows: set[int] = set()
    used_cols: set[int] = set()
    pairs = []
    for (row, col), _ in sorted(edges.items(), key=lambda item: (-item[1], item[0])):
        if row not in used_rows and col not in used_cols:
            used_rows.add(row)
            used_cols.add(col)
            pairs.append((row, col))
    return pairs


def hungarian(edges: Edges) -> list[tuple[int, int]]:
    """The exact assignment of greatest total weight (Kuhn-Munkres with potentials, O(n²m)).

    A pair left out of `edges` weighs 0, the same as leaving both unpaired, so the square
    problem's optimum, without its zero pairs, is the best one-to-one subset of `edges`.
    """
    rows = sorted({r for r, _ in edges})
    cols = sorted({c for _, c in edges})
    transposed = len(rows) > len(cols)
    if transposed:
        rows, cols = cols, rows
        edges = {(c, r): w for (r, c), w in edges.items()}
    n, m = len(rows), len(cols)
    row_of = {r: i for i, r in enumerate(rows, start=1)}
    col_of = {c: j for j, c in enumerate(cols, start=1)}
    cost = [[0] * (m + 1) for _ in range(n + 1)]  # one-indexed; minimised, so weights negated
    for (r, c), weight in edges.items():
        cost[row_of[r]][col_of[c]] = -weight
    owner = _solve(cost, n, m)
    pairs = []
    for j in range(1, m + 1):
        i = owner[j]
        if i and cost[i][j] < 0:
            row, col = rows[i - 1], cols[j - 1]
            pairs.append((col, row) if transposed else (row, col))
    return pairs


def _solve(cost: list[list[int]], n: int, m: int) -> list[int]:
    """Rows 1..n assigned to columns 1..m (n <= m) at least cost; `owner[j]` is column j's row."""
    inf = 1 << 62  # above any sum of weights: integers throughout
    u = [0] * (n + 1)
    v = [0] * (m + 1)
    owner = [0] * (m + 1)
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        owner[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = owner[j0], inf, 0
            row = cost[i0]
            ui0 = u[i0]
            for j in range(1, m + 1):
                if not used[j]:
                    reduced = row[j] - ui0 - v[j]
                    if reduced < minv[j]:
                        minv[j] = reduced
                        way[j] = j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(m + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if owner[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            owner[j0] = owner[j1]
            j0 = j1
    return owner
