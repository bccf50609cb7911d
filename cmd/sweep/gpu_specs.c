/* The device table (see predict.h): figures from each vendor datasheet, dense rates (the
 * datasheets' "with sparsity" figures are twice these), fp32 accumulation (GeForce cards run
 * fp16 products with fp32 accumulation at half their fp16-accumulation rate; linbench accumulates
 * in fp32). Sources: docs/METHOD.md, "Predicting". */
#include "cmd/sweep/predict.h"

const LbGpuSpec lb_gpu_specs[] = {
    /* name, label, CUDA's name; TFLOP/s fp16, bf16, TF32, fp32; GB/s; memory GiB; source */
    {"v100-16gb", "NVIDIA Tesla V100 SXM2 16GB", "Tesla V100-SXM2-16GB", 125, 0, 0, 15.7, 900, 16,
     "NVIDIA Tesla V100 datasheet (SXM2)"},
    {"v100-32gb", "NVIDIA Tesla V100 SXM2 32GB", "Tesla V100-SXM2-32GB", 125, 0, 0, 15.7, 900, 32,
     "NVIDIA Tesla V100 datasheet (SXM2)"},
    {"a100-40gb", "NVIDIA A100 SXM4 40GB", "NVIDIA A100-SXM4-40GB", 312, 312, 156, 19.5, 1555, 40,
     "NVIDIA A100 Tensor Core GPU datasheet"},
    {"a100-80gb", "NVIDIA A100 SXM4 80GB", "NVIDIA A100-SXM4-80GB", 312, 312, 156, 19.5, 2039, 80,
     "NVIDIA A100 Tensor Core GPU datasheet"},
    {"a10", "NVIDIA A10 24GB", "NVIDIA A10", 125, 125, 62.5, 31.2, 600, 24, "NVIDIA A10 Tensor Core GPU datasheet"},
    {"l4", "NVIDIA L4 24GB", "NVIDIA L4", 121, 121, 60, 30.3, 300, 24, "NVIDIA L4 Tensor Core GPU datasheet"},
    {"l40s", "NVIDIA L40S 48GB", "NVIDIA L40S", 362.05, 362.05, 183, 91.6, 864, 48, "NVIDIA L40S GPU datasheet"},
    {"rtx-3090", "NVIDIA GeForce RTX 3090 24GB", "NVIDIA GeForce RTX 3090", 71, 71, 35.6, 35.6, 936, 24,
     "NVIDIA Ampere GA102 GPU Architecture whitepaper"},
    {"rtx-4090", "NVIDIA GeForce RTX 4090 24GB", "NVIDIA GeForce RTX 4090", 165.2, 165.2, 82.6, 82.6, 1008, 24,
     "NVIDIA Ada GPU Architecture whitepaper"},
    {"h100-sxm", "NVIDIA H100 SXM 80GB", "NVIDIA H100 80GB HBM3", 989.5, 989.5, 494.5, 67, 3350, 80,
     "NVIDIA H100 Tensor Core GPU datasheet (SXM)"},
    {"h100-pcie", "NVIDIA H100 PCIe 80GB", "NVIDIA H100 PCIe", 756.5, 756.5, 378, 51, 2000, 80,
     "NVIDIA H100 Tensor Core GPU datasheet (PCIe)"},
    {"h200", "NVIDIA H200 SXM 141GB", "NVIDIA H200", 989.5, 989.5, 494.5, 67, 4800, 141,
     "NVIDIA H200 Tensor Core GPU datasheet (SXM)"},
    {"b200", "NVIDIA B200 180GB", "NVIDIA B200", 2250, 2250, 1125, 75, 8000, 180,
     "NVIDIA HGX B200 datasheet (per GPU: the 8-GPU board's figures / 8)"},
};

const size_t lb_gpu_spec_count = sizeof lb_gpu_specs / sizeof lb_gpu_specs[0];
