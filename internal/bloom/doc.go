// Package bloom provides a cache-blocked Bloom filter over 64-bit hashes,
// the request-ID pre-check's filter.
//
// A classic Bloom filter sets k bits spread over the whole bit array, so a
// check of a filter larger than the caches costs k cache misses: about a
// microsecond per check for the pre-check's million-entry filter, a tenth
// of a command's whole cost in memory. A blocked filter (Putze, Sanders
// and Singler, "Cache-, Hash- and Space-Efficient Bloom Filters") puts all
// k bits of a key in one 512-bit block, one cache line, so a check costs
// one miss. The price is a higher false-positive rate for the same number
// of bits, which New pays for by sizing the filter from the blocked
// filter's own rate formula rather than the classic one.
//
// The package exists because the Bloom filter libraries in reach hash
// byte slices and spread bits over the whole array; the pre-check already
// has a 64-bit hash of its key and needs the one-miss check. It is small
// and its false-positive rate is tested against its sizing.
package bloom
