#ifndef SPYGLASS_CFFMPEG_SHIM_H
#define SPYGLASS_CFFMPEG_SHIM_H
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavcodec/bsf.h>
#include <libavutil/avutil.h>
#include <libavutil/imgutils.h>
#include <libavutil/md5.h>
#include <libavutil/pixdesc.h>
#include <libavutil/opt.h>
#include <libavutil/error.h>
#include <libswscale/swscale.h>

/* Macros Swift cannot import, as functions. */
static inline int spy_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int spy_averror_eof(void) { return AVERROR_EOF; }
static inline int spy_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int64_t spy_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline void spy_av_strerror(int err, char *buf, size_t size) { av_strerror(err, buf, size); }
#endif
