# Sourced by scripts/serve-cluster.sh and Benchmarks/service-bench.sh: nginx on loopback in front of
# table-service instances, the upstream block of docs/deployment.md.
#   start_upstream_nginx WORK_DIR NGINX_PORT PROBE_PATH INSTANCE_PORT...
# sets upstream_pid, and returns once PROBE_PATH (a table) answers 2xx through nginx.
start_upstream_nginx() {
  local work=$1 nginx_port=$2 probe=$3 servers="" port
  shift 3
  for port in "$@"; do servers+="    server 127.0.0.1:$port;"$'\n'; done
  cat > "$work/upstream.conf" <<CONF
worker_processes 2;
daemon off;
error_log $work/upstream-error.log;
pid $work/upstream.pid;
events { worker_connections 4096; }
http {
  access_log off;
  upstream todosync {
$servers    keepalive 64;
  }
  server {
    listen 127.0.0.1:$nginx_port;
    client_max_body_size 1m;
    location / {
      proxy_pass http://todosync;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host:\$server_port;  # the instances answer only their own host names
    }
  }
}
CONF
  nginx -c "$work/upstream.conf" &
  upstream_pid=$!
  for _ in $(seq 50); do
    curl -sf -o /dev/null -H 'ZUMO-API-VERSION: 2.0.0' "http://127.0.0.1:$nginx_port$probe" && return 0
    sleep 0.1
  done
  echo "nginx in front of the instances did not answer: $(cat "$work/upstream-error.log" 2>/dev/null)" >&2
  return 1
}
