// A loop bound defined inside the loop's own body: MLIR 19's parser crashes
// on this forward reference (it frees the reference's placeholder while the
// scf.for still holds it); tilec rejects it before parsing.
func.func @forward(%A: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %p = %c0 to %n step %c1 {
    %n = arith.muli %p, %c1 : index
  }
  return
}
