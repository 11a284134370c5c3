# gpuplan: one image, the app on port 8501. Build: docker build -t gpuplan .
# Run: docker run -p 8501:8501 -e STREAMLIT_SERVER_COOKIE_SECRET=<same on every replica> gpuplan
FROM python:3.11.7-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first: this layer is reused until requirements.txt changes.
COPY requirements.txt .
RUN pip install -r requirements.txt

COPY .streamlit ./.streamlit
COPY gpuplan_core ./gpuplan_core
COPY gpuplan_ui ./gpuplan_ui
COPY app_pages ./app_pages
COPY data ./data
COPY app.py .

# A non-root user that owns nothing under /app: the code is read-only to the running app (nothing is
# written there; tests/e2e/test_image.py runs these steps from a read-only copy). Numeric, so that
# Kubernetes' runAsNonRoot can check it.
RUN useradd --create-home --uid 10001 app
USER 10001
# Pricing files named by links (gpuplan_core/pricing/store.py) go to SQLite in the user's home: mount a volume
# there to keep them across containers, or set GPUPLAN_DATABASE_URL for one PostgreSQL shared by the replicas.
ENV GPUPLAN_DATA_DIR=/home/app/gpuplan-data
# The serving step loop's machine code (numba, gpuplan_core/common/jit.py), compiled once here into the user's
# cache (~/.cache/numba: /app is read-only to the user), so no container pays the compile on its first question.
RUN python -c "from gpuplan_core.perf.simulate import warm; warm()"

EXPOSE 8501
# The slim image has no curl: ask the health endpoint with Python.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request as u; sys.exit(u.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=3).read() != b'ok')"]

# streamlit run app.py, plus TCP_NODELAY on every connection and one script run at a time
# (gpuplan_ui/serve.py says why; GPUPLAN_MAX_CONCURRENT_RUNS raises the limit).
ENTRYPOINT ["python", "-m", "gpuplan_ui.serve", "--server.port=8501", "--server.address=0.0.0.0"]
