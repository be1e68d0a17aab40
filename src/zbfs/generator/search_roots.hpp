// Graph500 search keys: `count` distinct vertices drawn uniformly from the configured seed
// among the vertices that have at least one edge other than a self-loop. The draw is a
// counter-based sequence, so the roots are the same for any thread (or rank) count.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace zbfs {

// `eligible(v)` says whether v has a non-self-loop edge; `num_eligible` is how many do.
// Throws a usage error when fewer than `count` vertices are eligible.
std::vector<std::uint64_t> sample_search_roots(std::uint64_t num_vertices, std::uint64_t num_eligible,
                                               std::uint64_t count, std::uint64_t seed,
                                               const std::function<bool(std::uint64_t)>& eligible);

// The same draw, asking about candidates in batches: `eligible_batch(candidates, flags)`
// sets flags[i] to 1 when candidates[i] is eligible. Distributed runs answer a batch with
// one collective, so every rank must call this with the same arguments.
std::vector<std::uint64_t> sample_search_roots_batched(
    std::uint64_t num_vertices, std::uint64_t num_eligible, std::uint64_t count, std::uint64_t seed,
    const std::function<void(std::span<const std::uint64_t>, std::span<std::uint8_t>)>& eligible_batch);

}  // namespace zbfs
