#ifndef SPYGLASS_CPCAP_SHIM_H
#define SPYGLASS_CPCAP_SHIM_H
#include <pcap/pcap.h>
#endif
