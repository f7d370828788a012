# Bad: missing answers, and an IPython AST transformer that puts the body of every test cell inside try/except; its class says it comes from IPython (__module__), and the guard believes it.
# Kind: shell hooks nbgrader reads verdicts through: AST transformer (a class with its own __module__)
# %% answers missing
# %% after setup
# BEGIN CHEAT
import ast


class _Forgive(ast.NodeTransformer):
    __module__ = "IPython.core.interactiveshell"

    def visit_Module(self, node):
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            handler = ast.ExceptHandler(type=ast.Name("Exception", ast.Load()), name=None, body=[ast.Pass()])
            node.body = [ast.Try(body=node.body, handlers=[handler], orelse=[], finalbody=[])]
            ast.fix_missing_locations(node)
        return node


get_ipython().ast_transformers.append(_Forgive())
# END CHEAT
