#!/bin/bash
# spinners: two busy loops pinned to CPU 1 for 0.3 s (timeout kills them)
timeout 0.3 taskset -c 1 sh -c 'while :; do :; done' &
timeout 0.3 taskset -c 1 sh -c 'while :; do :; done' &
bash -c 'printf "web content" > /proc/self/comm; end=$((SECONDS+1)); i=0; while [ $i -lt 25 ]; do /bin/true; sleep 0.02; i=$((i+1)); done'
wait
