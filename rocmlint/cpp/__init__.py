"""C, C++, CUDA and HIP sources: the preprocessor as HIP-Clang sees it (`preprocessor`), the
lines already gated for one GPU stack (`gates`), CUDA syntax made readable for the C++
grammar (`cuda_syntax`), where code works with the whole wavefront (`wave`), the `ast-grep`
matcher (`astgrep`) and the checks a tree pattern cannot say (`rules`)."""
