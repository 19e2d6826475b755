# Inference-only build of llama-cpp-python (the `local` extra); see README.md, "Install time".
#
#   CMAKE_ARGS="-DCMAKE_PROJECT_INCLUDE=$PWD/scripts/llama-inference-only.cmake" pip install ...
#
# CMake runs this file after every project() call of the build. The normal variables it sets
# shadow two cache entries (option() and, with policy CMP0126, a forced cache entry leave a
# normal variable alone):
#   LLAVA_BUILD         llama-cpp-python's multimodal library (mtmd), which only its image
#                       chat handlers load, lazily;
#   LLAMA_BUILD_COMMON  llama.cpp's common/ library (argument parsing, chat templates, an HTTP
#                       client), which llama-cpp-python forces ON but never loads: its Python
#                       bindings use only libllama and libggml*.
# Together they were two thirds of the compile work (104 of 178 object files).
set(LLAVA_BUILD OFF)
set(LLAMA_BUILD_COMMON OFF)
