// isa_ladder.cpp — what each instruction set of the fast tier buys: W2 n = 256, W1 T = 1024 (fused)
// and a W3 tiny training step, timed in CPU time (not wall time, so a loaded machine's time-slicing
// does not count), on the tier and ISA chosen by the environment. A benchmark: prints, never fails.
//   for isa in avx512 avx2 sse2 scalar; do AP_FAST_ISA=$isa build/ap_isa_ladder; done
//   build/ap_isa_ladder reference
#include <ctime>
#include <cstdio>
#include <vector>
#include "core/kernels/kernels.h"
#include "core/kernels/kernels_fast.h"
#include "core/model/gpt.h"
#include "core/model/optim.h"
using namespace ap;
static double cpu(){ timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9; }
volatile float sink;
int main(int argc,char**argv){
  const bool ref = argc>1 && std::string(argv[1])=="reference";
  kernels::set_tier(ref? kernels::Tier::reference : kernels::Tier::fast);
  const kernels::Kernels& k = kernels::active();
  printf("%s", k.name);
  { int n=256; std::vector<float> a(n*n,0.5f), b(n*n,0.25f), c(n*n); int reps = ref? 5:100;
    k.matmul_forward(c.data(),a.data(),b.data(),nullptr,n,n,n);
    double t0=cpu(); for(int r=0;r<reps;++r) k.matmul_forward(c.data(),a.data(),b.data(),nullptr,n,n,n); double t=(cpu()-t0)/reps;
    printf("  W2 n=256 %.1f us (%.1f GFLOP/s)", t*1e6, 2.0*n*n*n/t*1e-9); }
  { int T=1024,d=64; std::vector<float> qkv(T*3*d); for(size_t i=0;i<qkv.size();++i) qkv[i]=((i*7919)%1000)/1000.0f-0.5f;
    std::vector<float> out(T*d), sc(kernels::attention_forward_infer_scratch_max(1,T,d,1)); int reps = ref? 2:20;
    double t0=cpu(); for(int r=0;r<reps;++r) k.attention_forward_infer(out.data(),sc.data(),qkv.data(),1,T,d,1,{}); double t=(cpu()-t0)/reps;
    printf("  W1 T=1024 %.1f us (%.1f GFLOP/s)", t*1e6, 4.0*T*T*d/t*1e-9); }
  { GPT m(GPTConfig::tiny(65)); m.init_weights(0); m.reserve(16,64); AdamW opt(m.tensors(), m.num_parameters());
    std::vector<int> x(1024), y(1024); for(int i=0;i<1024;++i){x[i]=i*7%65; y[i]=i*13%65;}
    auto step=[&]{ m.forward(x.data(),y.data(),16,64); m.zero_grad(); m.backward(); opt.step(m.params(),m.grads(),1e-3f); };
    step(); int reps = ref? 3:20; double t0=cpu(); for(int r=0;r<reps;++r) step(); double t=(cpu()-t0)/reps;
    printf("  W3 tiny %.2f ms/step (%.0f tok/s)\n", t*1e3, 1024/t); }
}
