#ifndef SPYGLASS_CSDL2_SHIM_H
#define SPYGLASS_CSDL2_SHIM_H
#include <SDL2/SDL.h>
#include <SDL2/SDL_ttf.h>
#include <SDL2/SDL_image.h>

/* Macros Swift cannot import, as functions. */
static inline int spy_sdl_windowpos_undefined(void) { return SDL_WINDOWPOS_UNDEFINED; }
static inline int spy_sdl_windowpos_centered(void) { return SDL_WINDOWPOS_CENTERED; }
#endif
