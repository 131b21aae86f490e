# Sourced by the benchmarks: starts nginx on a random loopback port as the baseline server.
#   start_nginx WORK_DIR ROOT DEFAULT_TYPE PROBE_PATH
# sets nginx_port and nginx_pid, and returns once PROBE_PATH answers.
start_nginx() {
  local work=$1 root=$2 default_type=$3 probe=$4
  nginx_port=$(( 20000 + RANDOM % 20000 ))
  cat > "$work/nginx.conf" <<CONF
worker_processes 2;
daemon off;
error_log $work/nginx-error.log;
pid $work/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  default_type "$default_type";
  types { text/css css; }
  server { listen 127.0.0.1:$nginx_port; root $root; }
}
CONF
  nginx -c "$work/nginx.conf" &
  nginx_pid=$!
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$nginx_port$probe" && return 0; sleep 0.1; done
  echo "nginx did not start: $(cat "$work/nginx-error.log" 2>/dev/null)" >&2
  return 1
}
