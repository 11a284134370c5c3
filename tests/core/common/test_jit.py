"""Compiled inner loops (gpuplan_core/common/jit.py): the containers compiled code fills, compiled or not."""

from gpuplan_core.common import jit


def test_a_compiled_function_answers_as_the_python_one():
    def triangle(n):
        total = 0
        for k in range(n + 1):
            total += k
        return total

    assert jit.njit(triangle)(100) == triangle(100) == 5050


def test_the_typed_containers_hold_what_they_are_given():
    index, cells, floats = jit.int_dict(), jit.cell_dict(), jit.float_list()
    index[7] = 3
    cells[2, 5] = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0)
    floats.append(0.25)
    assert index[7] == 3 and cells[2, 5][7] == 8.0 and list(floats) == [0.25]
