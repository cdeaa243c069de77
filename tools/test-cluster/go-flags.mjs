// The GOFLAGS of every Go build the tests need (tools/test-cluster, tools/pulumi, tools/data-path),
// in one place. Each build script puts them in its cache folder's key, so a change here builds anew.
//   -buildvcs=false           the module cache holds no VCS data to stamp
//   -trimpath                 no build machine's paths in the binaries
//   -gcflags=all=-dwarf=false the compiler writes no debugging information: every link here drops it
//                             (-ldflags=-s -w), so writing it was CPU thrown away. etcd from a cold
//                             build cache: 66–69 s of CPU with it, 55–57 s without (2026-12-07,
//                             docs/testing.md). Stack traces and pprof keep their names and lines
//                             (those come from the binary's pclntab, not from DWARF).

/** The flags, one item each. */
export const GO_BUILD_FLAGS = Object.freeze(['-buildvcs=false', '-trimpath', '-gcflags=all=-dwarf=false']);

/** `GOFLAGS`: the shared flags, then a script's own (`-mod=readonly`, `-mod=mod`). */
export function goFlags(...extra) {
  return [...GO_BUILD_FLAGS, ...extra].join(' ');
}
