// api.h — the core's JSON face: text in, text out. The CLI and the wasm bindings both call these
// functions and nothing else, so the two builds are one code path and their outputs can be
// compared byte for byte (tests/wasm/agreement.test.mjs does).
//
// Every function catches every exception and returns either
//   {"ok":true, ...result...}
// or
//   {"ok":false, "error":"K has 3 columns but Q has 4", "field":"K", "row":0, "column":0}
// where field names the input at fault ("" if none) and row/column are 1-based (0: not one cell).
//
// Numbers in output are float32 values written with the fewest digits that read back to the same
// float; non-finite values are the strings "-inf", "inf" and "nan" (JSON has no such numbers).
// The same strings are accepted in input, where they are reported as errors for matrices.
//
// The spec of trace_json (all keys optional unless said):
//   "x", "W_q", "W_k", "W_v", "W_o": matrices — [[1,0],[0,1]] or a string the matrix parser
//                                    reads ("1 0; 0 1"); "b_q", "b_k", "b_v", "b_o": vectors
//                                    ([1,2] or "1 2")
//   "Q", "K", "V":                   matrices (instead of x and the weights)
//   "seed": integer ≥ 0              fills missing W_q, W_k, W_v (square, d_model × d_model)
//                                    uniform in ±1/√head_dim
//   "n_head": 1, "causal": false, "mask": "strict" (j > i + base) | "inclusive" (j >= i + base),
//   "base": 0, "scale": true, "softmax": "stable" | "naive"
// Its result: {"ok":true, "trace":{ "mode":"x"|"qkv", "T", "T_total", "base", "n_head",
//   "d_model", "head_dim", "d_v", "d_out", "scale_factor", "options":{...as used...},
//   "inputs":{ the matrices used, random ones included },
//   "mask": [[...]],
//   "heads":[{ "q","k","v","scores","scaled","masked","weights","weight_row_sums","context" }],
//   "concat", "out", "empty_rows":[{"head","row"}], "overflow_rows":[{"head","row"}],
//   "warnings":["..."] }}
#pragma once

#include <string>

namespace ap {

// Runs attention_trace on a JSON spec and returns the whole trace.
std::string trace_json(const std::string& spec);
// The backward pass. The spec is trace_json's plus the upstream gradient, one of:
//   "d_out": matrix (T × out width)      L = Σ d_out ⊙ out
//   "loss": "sum" (the default)          L = Σ out, so d_out = 1
//   "loss": "mse", "target": matrix      L = mean((out − target)²), d_out = 2(out − target)/numel
// Result: {"ok":true, "trace":{…as trace_json…}, "loss": L, "grads":{ "out" (the d_out used),
//   "W_o", "b_o", "concat", "heads":[{"context","weights","v","scaled","scores","q","k"}], "Q", "K",
//   "V", "x", "W_q", "W_k", "W_v", "b_q", "b_k", "b_v" }} — each key is ∂L/∂(the forward value of
// that name), present when that value exists. "scaled" is the gradient at the softmax input (the
// mask is a constant add, so it is also ∂L/∂masked); masked positions and empty rows get exactly 0.
// (Beware the two d_out: in a spec, the gradient matrix; in a trace, the width of out.)
std::string backward_json(const std::string& spec);
// A central finite-difference check of backward_json's gradients: the spec of backward_json plus
//   "check": [{"name":"W_q","row":0,"col":1}, …]   entries to check (0-based; a vector has row 0);
//                                                 default: every input entry, at most 1024
//   "eps": 0.01                                   the step (0 < eps ≤ 1)
// L is evaluated in float32 forward passes and summed in double; with d_out given it is held fixed.
// Result: {"ok":true,"loss":L,"eps":…,"checks":[{"name","row","col","analytic","numeric",
//   "abs_error","rel_error"}]}, rel_error = |numeric − analytic| / (|numeric| + |analytic|).
std::string gradcheck_json(const std::string& spec);
// Parses matrix text (see matrix_parse.h): {"ok":true,"rows":2,"cols":2,"matrix":[[1,0],[0,1]]}.
std::string parse_matrix_json(const std::string& text);
// {"rows":2,"cols":3,"seed":1,"bound":0.5} → {"ok":true,"matrix":[[...]]}. bound defaults to
// 1/√cols.
std::string random_matrix_json(const std::string& spec);
// {"T":4,"base":0,"mask":"strict"} → {"ok":true,"mask":[[0,"-inf",...],...]} (T_total = T + base).
std::string causal_mask_json(const std::string& spec);
// {"x":[[...]],"softmax":"stable"|"naive"} → {"ok":true,"weights":[[...]],"empty_rows":[...],
// "overflow_rows":[...]} — the row softmax alone, as the page's softmax exercise uses it.
std::string softmax_json(const std::string& spec);
// The version of the core, e.g. "0.1.0".
std::string version();

}  // namespace ap
